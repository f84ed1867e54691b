package informer_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/rest"
)

// Widget stands for a controller author's own resource (a CRD's Go type):
// not in k8s.io/api, no protobuf, registered by hand.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetSpec `json:"spec"`
}

type WidgetSpec struct {
	Size int `json:"size"`
}

type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

func (w *Widget) DeepCopyObject() runtime.Object {
	out := *w
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

func (l *WidgetList) DeepCopyObject() runtime.Object {
	out := *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]Widget, len(l.Items))
	for i := range l.Items {
		out.Items[i] = *l.Items[i].DeepCopyObject().(*Widget)
	}
	return &out
}

var widgetGV = schema.GroupVersion{Group: "example.com", Version: "v1"}

func widgetScheme() *runtime.Scheme {
	s := apiresource.NewScheme()
	s.AddKnownTypes(widgetGV, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(s, widgetGV)
	return s
}

func TestUsersOwnTypeWorksEndToEnd(t *testing.T) {
	scheme := widgetScheme()
	srv, err := fakeapi.NewServer(fakeapi.Options{
		Scheme:    scheme,
		Resources: []fakeapi.ServedResource{{Resource: informer.Resource{Kind: widgetGV.WithKind("Widget"), Plural: "widgets"}}},
	})
	require.NoError(t, err)
	defer srv.Close()
	_, err = srv.Create(&Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "w1"}, Spec: WidgetSpec{Size: 3}})
	require.NoError(t, err)

	factory := informer.NewFactory(rest.Config{Host: srv.URL()}, informer.FactoryOptions{Scheme: scheme})
	defer factory.Shutdown()
	widgets, err := informer.For[*Widget](factory)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	factory.Start(ctx)
	require.Equal(t, map[string]bool{"widgets.example.com": true}, factory.WaitForCacheSync(ctx))

	got, err := widgets.Lister().Namespace("shop").Get("w1")
	require.NoError(t, err)
	require.Equal(t, 3, got.Spec.Size)

	_, err = srv.Create(&Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "w2"}, Spec: WidgetSpec{Size: 5}})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		w, err := widgets.Lister().Namespace("shop").Get("w2")
		return err == nil && w.Spec.Size == 5
	}, 20*time.Second, 5*time.Millisecond)
}

// A plural override in FactoryOptions.Resources names the resource all the
// way to the wire: For[T] lists and watches the overridden plural and
// decodes into T's kind, without guessing a kind back from a plural the
// guess would never make (issue #28; before, New failed with "kind not
// known to the scheme").
func TestPluralOverrideIsHonouredByFor(t *testing.T) {
	scheme := widgetScheme()
	gizmos := informer.Resource{Kind: widgetGV.WithKind("Widget"), Plural: "gizmos"}
	srv, err := fakeapi.NewServer(fakeapi.Options{Scheme: scheme, Resources: []fakeapi.ServedResource{{Resource: gizmos}}})
	require.NoError(t, err)
	defer srv.Close()
	_, err = srv.Create(&Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "w1"}, Spec: WidgetSpec{Size: 3}})
	require.NoError(t, err)

	factory := informer.NewFactory(rest.Config{Host: srv.URL()}, informer.FactoryOptions{Scheme: scheme, Resources: []informer.Resource{gizmos}})
	defer factory.Shutdown()
	widgets, err := informer.For[*Widget](factory)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	factory.Start(ctx)
	require.Equal(t, map[string]bool{"gizmos.example.com": true}, factory.WaitForCacheSync(ctx))
	got, err := widgets.Lister().Namespace("shop").Get("w1")
	require.NoError(t, err)
	require.Equal(t, 3, got.Spec.Size)
}
