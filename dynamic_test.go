package informer_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/reflector"
	"github.com/seed31a95821/informer/rest"
)

var gadgetsGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}

// A CRD created while the program runs is found through discovery (its
// kind and scope), and its objects are cached as unstructured ones, under
// a name of their own; asking again returns the same informer.
func TestForDynamicDiscoversACRDCreatedAtRunTime(t *testing.T) {
	e := newEnv(t, informer.FactoryOptions{})
	_, err := informer.ForDynamic(e.factory, gadgetsGVR)
	require.ErrorIs(t, err, informer.ErrUnknownResource, "no CRD yet")

	_, err = e.srv.Create(unstructuredOf(t, gadgetCRD))
	require.NoError(t, err)
	g := gadget(t, "g1")
	require.NoError(t, unstructured.SetNestedField(g.Object, int64(3), "spec", "replicas"))
	_, err = e.srv.Create(g)
	require.NoError(t, err)
	inf, err := informer.ForDynamic(e.factory, gadgetsGVR)
	require.NoError(t, err)
	again, err := informer.ForDynamic(e.factory, gadgetsGVR)
	require.NoError(t, err)
	assert.Same(t, inf, again)
	e.start(t)

	assert.Contains(t, e.factory.WaitForCacheSync(e.ctx), "gadgets.example.com (dynamic)")
	got, err := inf.Lister().Get("default", "g1")
	require.NoError(t, err)
	assert.Equal(t, "Gadget", got.GetKind())
	replicas, _, _ := unstructured.NestedFieldNoCopy(got.Object, "spec", "replicas")
	assert.Equal(t, int64(3), replicas)
	listed, err := inf.Lister().Namespace("default").List(labels.Everything())
	require.NoError(t, err)
	assert.Len(t, listed, 1)
	assert.Empty(t, e.errs.all())
}

// For cannot tell a resource from an unstructured type: it says to use
// ForDynamic.
func TestForRefusesUnstructured(t *testing.T) {
	e := newEnv(t, informer.FactoryOptions{})
	_, err := informer.For[*unstructured.Unstructured](e.factory)
	assert.ErrorIs(t, err, informer.ErrUnknownType)
	assert.ErrorContains(t, err, "ForDynamic")
}

// An override in FactoryOptions.Resources resolves the resource with no
// server to ask; without one, a factory that has no rest.Client cannot
// resolve it.
func TestForDynamicOverrideNeedsNoDiscovery(t *testing.T) {
	gadgets := informer.Resource{Kind: gadgetsGVR.GroupVersion().WithKind("Gadget"), Plural: "gadgets"}
	var got []informer.Resource
	lw := func(r informer.Resource, _ bool) (reflector.ListerWatcher, error) {
		got = append(got, r)
		return &reflector.ListWatch{}, nil
	}
	f := informer.NewFactory(rest.Config{}, informer.FactoryOptions{ListerWatcher: lw, Resources: []informer.Resource{gadgets}})
	defer f.Shutdown()
	_, err := informer.ForDynamic(f, gadgetsGVR)
	require.NoError(t, err)
	assert.Equal(t, []informer.Resource{gadgets}, got)

	_, err = informer.ForDynamic(f, schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gizmos"})
	assert.ErrorIs(t, err, informer.ErrUnknownResource)
}

// Gadgets decoded by a dynamic informer share their equal parts (here a
// spec) unless the informer's Transform may modify them in place: one
// that writes each object's own name into its spec must find a spec of
// its own in every object.
func TestDynamicInformerSharesPartsOnlyWhenNothingModifiesThem(t *testing.T) {
	e := newEnv(t, informer.FactoryOptions{})
	_, err := e.srv.Create(unstructuredOf(t, gadgetCRD))
	require.NoError(t, err)
	names := []string{"g1", "g2", "g3", "g4"}
	for _, name := range names {
		g := gadget(t, name)
		g.Object["spec"] = map[string]any{"ports": []any{map[string]any{"port": int64(80)}}, "size": "L"}
		_, err := e.srv.Create(g)
		require.NoError(t, err)
	}
	specs := func(inf *informer.SharedInformer[*unstructured.Unstructured]) map[string]map[string]any {
		out := map[string]map[string]any{}
		for _, name := range names {
			g, err := inf.Lister().Get("default", name)
			require.NoError(t, err)
			out[name] = g.Object["spec"].(map[string]any)
		}
		return out
	}

	shared, err := informer.ForDynamic(e.factory, gadgetsGVR)
	require.NoError(t, err)
	e.start(t)
	got := specs(shared)
	assert.Equal(t, reflect.ValueOf(got["g3"]).Pointer(), reflect.ValueOf(got["g4"]).Pointer(), "equal specs are one map")

	owner := func(obj runtime.Object) (runtime.Object, error) {
		u := obj.(*unstructured.Unstructured)
		return u, unstructured.SetNestedField(u.Object, u.GetName(), "spec", "owner")
	}
	f := informer.NewFactory(rest.Config{Host: e.srv.URL()}, informer.FactoryOptions{Informer: informer.Options{Transform: informer.Transform{Func: owner}}})
	defer f.Shutdown()
	inf, err := informer.ForDynamic(f, gadgetsGVR)
	require.NoError(t, err)
	f.Start(e.ctx)
	require.Equal(t, map[string]bool{"gadgets.example.com (dynamic)": true}, f.WaitForCacheSync(e.ctx))
	for name, spec := range specs(inf) {
		assert.Equal(t, name, spec["owner"], "a Transform that modifies an object modifies that object alone")
	}
}

// events.k8s.io/v1 Events, which fakeapi serves as a view of core/v1
// Events as the real server does, list and watch through ForDynamic: an
// Event written through core/v1 is cached in its events.k8s.io/v1 shape.
func TestForDynamicListsAndWatchesEventsV1(t *testing.T) {
	core := func(name, message string) *corev1.Event {
		return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Message: message,
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web"}}
	}
	e := newEnv(t, informer.FactoryOptions{}, core("listed", "from the list"))
	inf, err := informer.ForDynamic(e.factory, eventsv1.SchemeGroupVersion.WithResource("events"))
	require.NoError(t, err)
	e.start(t)
	got, err := inf.Lister().Get("default", "listed")
	require.NoError(t, err)
	note, _, _ := unstructured.NestedString(got.Object, "note")
	assert.Equal(t, "from the list", note, "message is note in events.k8s.io/v1")

	_, err = e.srv.Create(core("watched", "from the watch"))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		got, err := inf.Lister().Get("default", "watched")
		if err != nil {
			return false
		}
		note, _, _ := unstructured.NestedString(got.Object, "note")
		return note == "from the watch"
	}, 10*time.Second, 5*time.Millisecond)
	assert.Empty(t, e.errs.all())
}
