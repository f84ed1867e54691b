package wire_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/reflector/wire"
	"github.com/seed31a95821/informer/rest"
)

const gadgetCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"gadgets.example.com"},
"spec":{"group":"example.com","scope":"Namespaced",
 "names":{"plural":"gadgets","singular":"gadget","kind":"Gadget"},
 "versions":[{"name":"v1","served":true,"storage":true,
  "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`

var gadgetsResource = apiresource.Resource{Kind: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gadget"}, Plural: "gadgets"}

// unstructuredOf decodes js as the API server would store it: integers
// as int64.
func unstructuredOf(t *testing.T, js string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(t, u.UnmarshalJSON([]byte(js)))
	return u
}

func newGadgetServer(t *testing.T) *fakeapi.Server {
	t.Helper()
	srv := newFakeAPI(t)
	_, err := srv.Create(unstructuredOf(t, gadgetCRD))
	require.NoError(t, err)
	return srv
}

// A kind no scheme knows is listed and watched as unstructured objects,
// each stamped with its kind, integers kept as int64.
func TestUnstructuredListAndWatch(t *testing.T) {
	srv := newGadgetServer(t)
	_, err := srv.Create(unstructuredOf(t, `{"apiVersion":"example.com/v1","kind":"Gadget",
		"metadata":{"namespace":"default","name":"g1"},"spec":{"replicas":3,"ratio":0.5}}`))
	require.NoError(t, err)
	rc := newRESTClient(t, rest.Config{Host: srv.URL(), BearerToken: "fake-token"})
	lw, err := wire.New(rc, gadgetsResource, wire.Options{Unstructured: true})
	require.NoError(t, err)
	ctx := context.Background()

	obj, err := lw.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	list, ok := obj.(*unstructured.UnstructuredList)
	require.True(t, ok, "%T", obj)
	assert.Equal(t, "GadgetList", list.GetKind())
	require.Len(t, list.Items, 1)
	g1 := list.Items[0]
	assert.Equal(t, gadgetsResource.Kind, g1.GroupVersionKind())
	assert.Equal(t, int64(3), g1.Object["spec"].(map[string]any)["replicas"])
	assert.Equal(t, 0.5, g1.Object["spec"].(map[string]any)["ratio"])

	w, err := lw.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
	require.NoError(t, err)
	defer w.Stop()
	_, err = srv.Create(unstructuredOf(t, `{"apiVersion":"example.com/v1","kind":"Gadget",
		"metadata":{"namespace":"default","name":"g2"},"spec":{"replicas":7}}`))
	require.NoError(t, err)
	ev := nextEvent(t, w)
	require.Equal(t, watch.Added, ev.Type)
	g2, ok := ev.Object.(*unstructured.Unstructured)
	require.True(t, ok, "%T", ev.Object)
	assert.Equal(t, "g2", g2.GetName())
	assert.Equal(t, gadgetsResource.Kind, g2.GroupVersionKind())
	replicas, _, err := unstructured.NestedInt64(g2.Object, "spec", "replicas")
	require.NoError(t, err)
	assert.Equal(t, int64(7), replicas)
}

// The kind is checked as in the typed mode: a resource named for another
// kind than the server's objects refuses the list.
func TestUnstructuredListOfAnotherKindIsRefused(t *testing.T) {
	srv := newGadgetServer(t)
	rc := newRESTClient(t, rest.Config{Host: srv.URL(), BearerToken: "fake-token"})
	wrong := gadgetsResource
	wrong.Kind.Kind = "Widget"
	lw, err := wire.New(rc, wrong, wire.Options{Unstructured: true})
	require.NoError(t, err)
	_, err = lw.List(context.Background(), metav1.ListOptions{})
	assert.ErrorIs(t, err, wire.ErrUnexpectedKind)
}

func TestUnstructuredAndMetadataOnlyExcludeEachOther(t *testing.T) {
	rc := newRESTClient(t, rest.Config{Host: "http://127.0.0.1:1"})
	_, err := wire.New(rc, gadgetsResource, wire.Options{Unstructured: true, MetadataOnly: true})
	assert.ErrorIs(t, err, rest.ErrInvalidConfig)
}

// contentTypes records the Content-Type of every response.
type contentTypes struct {
	base  *http.Transport
	mu    sync.Mutex // guards types
	types []string
}

func (c *contentTypes) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	if err == nil {
		c.mu.Lock()
		c.types = append(c.types, resp.Header.Get("Content-Type"))
		c.mu.Unlock()
	}
	return resp, err
}

func (c *contentTypes) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.types...)
}

// With rest.ContentTypeCBOR, an unstructured ListerWatcher lists and
// watches in CBOR where the server serves it, and in JSON where it does
// not; integers are int64 either way.
func TestUnstructuredCBORWhereServed(t *testing.T) {
	for _, served := range []bool{true, false} {
		t.Run(map[bool]string{true: "served", false: "not served"}[served], func(t *testing.T) {
			srv, err := fakeapi.NewServer(fakeapi.Options{CBOR: served})
			require.NoError(t, err)
			t.Cleanup(srv.Close)
			_, err = srv.Create(unstructuredOf(t, gadgetCRD))
			require.NoError(t, err)
			_, err = srv.Create(unstructuredOf(t, `{"apiVersion":"example.com/v1","kind":"Gadget",
				"metadata":{"namespace":"default","name":"g1"},"spec":{"replicas":3}}`))
			require.NoError(t, err)
			rec := &contentTypes{base: &http.Transport{}}
			t.Cleanup(rec.base.CloseIdleConnections)
			rc := newRESTClient(t, rest.Config{Host: srv.URL(), ContentType: rest.ContentTypeCBOR, HTTPClient: &http.Client{Transport: rec}})
			lw, err := wire.New(rc, gadgetsResource, wire.Options{Unstructured: true})
			require.NoError(t, err)
			ctx := context.Background()

			obj, err := lw.List(ctx, metav1.ListOptions{})
			require.NoError(t, err)
			list := obj.(*unstructured.UnstructuredList)
			require.Len(t, list.Items, 1)
			assert.Equal(t, int64(3), list.Items[0].Object["spec"].(map[string]any)["replicas"])
			w, err := lw.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
			require.NoError(t, err)
			defer w.Stop()
			_, err = srv.Create(unstructuredOf(t, `{"apiVersion":"example.com/v1","kind":"Gadget",
				"metadata":{"namespace":"default","name":"g2"},"spec":{"replicas":7}}`))
			require.NoError(t, err)
			ev := nextEvent(t, w)
			require.Equal(t, watch.Added, ev.Type)
			g2 := ev.Object.(*unstructured.Unstructured)
			assert.Equal(t, gadgetsResource.Kind, g2.GroupVersionKind())
			assert.Equal(t, int64(7), g2.Object["spec"].(map[string]any)["replicas"])

			want := []string{"application/json", "application/json"}
			if served {
				want = []string{"application/cbor", "application/cbor-seq"}
			}
			assert.Equal(t, want, rec.all())
		})
	}
}

// A typed ListerWatcher never asks for CBOR, whatever the Config says.
func TestTypedListerWatcherDoesNotAskForCBOR(t *testing.T) {
	srv, err := fakeapi.NewServer(fakeapi.Options{CBOR: true, Token: "fake-token"})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	createPod(t, srv, "default", "p")
	rc := newRESTClient(t, rest.Config{Host: srv.URL(), BearerToken: "fake-token", ContentType: rest.ContentTypeCBOR})
	lw, err := wire.New(rc, podsResource, wire.Options{})
	require.NoError(t, err)
	_, err = lw.List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
}
