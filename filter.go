package informer

import (
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// UpdateFilter decides whether an update reaches a handler
// (HandlerOptions.UpdateFilter). Adds and deletes always do, and so do
// resyncs: a handler that asked for a resync wants it, though nothing
// changed.
type UpdateFilter func(old, cur metav1.Object) bool

// GenerationChanged passes updates that changed the generation: for most
// kinds, a change of the spec. A controller that acts on spec changes only
// skips the status updates it writes itself.
func GenerationChanged(old, cur metav1.Object) bool {
	return old.GetGeneration() != cur.GetGeneration()
}

// LabelsChanged passes updates that changed the labels.
func LabelsChanged(old, cur metav1.Object) bool {
	return !maps.Equal(old.GetLabels(), cur.GetLabels())
}

// AnnotationsChanged passes updates that changed the annotations.
func AnnotationsChanged(old, cur metav1.Object) bool {
	return !maps.Equal(old.GetAnnotations(), cur.GetAnnotations())
}

// AnyOf passes an update that any of filters passes.
func AnyOf(filters ...UpdateFilter) UpdateFilter {
	return func(old, cur metav1.Object) bool {
		for _, f := range filters {
			if f(old, cur) {
				return true
			}
		}
		return false
	}
}

// passes applies f to an update notification. Objects without metadata
// cannot be compared and pass.
func (f UpdateFilter) passes(old, cur any) bool {
	if f == nil || old == cur {
		return true
	}
	o, ok1 := old.(metav1.Object)
	c, ok2 := cur.(metav1.Object)
	if !ok1 || !ok2 {
		return true
	}
	return f(o, c)
}
