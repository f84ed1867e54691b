package convert

import (
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Pair is one resource kube-apiserver stores in one version and serves in
// another too, with the conversions between the two. Pairs is the one list
// of them: fakeapi's views serve them, and its field managers convert
// through them (fakeapi/internal/apply).
type Pair struct {
	Stored, View schema.GroupVersionKind
	// ToStorage converts an object of View's type to Stored's, and
	// FromStorage back; an object of another type is an error.
	ToStorage, FromStorage func(runtime.Object) (runtime.Object, error)
}

// Pairs returns the pairs this package converts: Events (core/v1 stored,
// events.k8s.io/v1 served too) and HorizontalPodAutoscalers (autoscaling/v2
// stored, autoscaling/v1 served too).
func Pairs() []Pair {
	return []Pair{
		{Stored: CoreEventKind, View: EventsEventKind,
			ToStorage:   typed(func(e *eventsv1.Event) (*corev1.Event, error) { return EventToCore(e), nil }),
			FromStorage: typed(func(e *corev1.Event) (*eventsv1.Event, error) { return EventFromCore(e), nil })},
		{Stored: HPAv2Kind, View: HPAv1Kind,
			ToStorage: typed(func(h *autoscalingv1.HorizontalPodAutoscaler) (*autoscalingv2.HorizontalPodAutoscaler, error) {
				return HPAToV2(h), nil
			}),
			FromStorage: typed(HPAToV1)},
	}
}

// Other returns the other version of kind when kind is one side of a pair.
func Other(kind schema.GroupVersionKind) (schema.GroupVersionKind, bool) {
	for _, p := range Pairs() {
		switch kind {
		case p.Stored:
			return p.View, true
		case p.View:
			return p.Stored, true
		}
	}
	return schema.GroupVersionKind{}, false
}

// typed makes a conversion between two Go types one of runtime.Objects.
func typed[In, Out runtime.Object](f func(In) (Out, error)) func(runtime.Object) (runtime.Object, error) {
	return func(obj runtime.Object) (runtime.Object, error) {
		in, ok := obj.(In)
		if !ok {
			var want In
			return nil, fmt.Errorf("cannot convert %T, want %T", obj, want)
		}
		out, err := f(in)
		if err != nil {
			return nil, fmt.Errorf("converting %T: %w", obj, err)
		}
		return out, nil
	}
}
