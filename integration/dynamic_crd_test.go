package integration

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/client"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/indexer"
	"github.com/seed31a95821/informer/integration/realapi"
	"github.com/seed31a95821/informer/kubeconfig"
	"github.com/seed31a95821/informer/reflector"
	"github.com/seed31a95821/informer/rest"
)

var (
	crdsGVR    = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	gizmosGVR  = schema.GroupVersionResource{Group: "dyn.example.com", Version: "v1", Resource: "gizmos"}
	gizmoCRDv1 = map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "gizmos.dyn.example.com"},
		"spec": map[string]any{
			"group": "dyn.example.com", "scope": "Namespaced",
			"names": map[string]any{"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo", "listKind": "GizmoList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}
)

// TestDynamicCRDLifecycle runs the dynamic informer and client against
// fakeapi, with the informer in JSON and in CBOR: see
// checkDynamicCRDLifecycle. fakeapi keeps a deleted CRD's watches open
// (the real server ends them), so the test ends them.
func TestDynamicCRDLifecycle(t *testing.T) {
	for _, contentType := range []string{rest.ContentTypeJSON, rest.ContentTypeCBOR} {
		t.Run(contentType, func(t *testing.T) {
			srv, err := fakeapi.NewServer(fakeapi.Options{BookmarkInterval: 100 * time.Millisecond, CBOR: true})
			require.NoError(t, err)
			t.Cleanup(srv.Close)
			checkDynamicCRDLifecycle(t, rest.Config{Host: srv.URL(), ContentType: contentType}, srv.DropWatches)
		})
	}
}

// TestDynamicCRDLifecycleRealAPI is TestDynamicCRDLifecycle against a real
// kube-apiserver, which does everything itself (skipped under -short).
func TestDynamicCRDLifecycleRealAPI(t *testing.T) {
	cluster := realapi.Start(t)
	cfg, err := kubeconfig.LoadKubeconfig(cluster.Kubeconfig)
	require.NoError(t, err)
	checkDynamicCRDLifecycle(t, cfg, func() {})
}

// checkDynamicCRDLifecycle: a CRD created at run time (through the dynamic
// client, as kubectl apply would) is discovered, watched by a dynamic
// informer (its lister, an index, a transform and a handler), written with
// every verb of the dynamic client, then deleted: the informer reports
// that once, however often it probes, and picks up the objects of the
// re-created CRD without a restart. Integers stay int64 from end to end.
func checkDynamicCRDLifecycle(t *testing.T, cfg rest.Config, endWatches func()) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := client.New(cfg, client.Options{})
	require.NoError(t, err)
	defer c.CloseIdleConnections()
	createNamespace(t, c, "dyn")
	crds, err := client.ForDynamic(ctx, c, crdsGVR)
	require.NoError(t, err)

	_, err = client.ForDynamic(ctx, c, gizmosGVR)
	require.ErrorIs(t, err, informer.ErrUnknownResource, "before its CRD, the resource is unknown")
	createCRD(ctx, t, crds)
	gizmos := discovered(ctx, t, c)

	var errs errorLog
	var seen handlerLog
	f := informer.NewFactory(cfg, informer.FactoryOptions{Informer: informer.Options{
		OnError:   errs.add,
		Transform: informer.StripManagedFields(),
		Reflector: quickInformer(),
	}})
	defer f.Shutdown()
	inf, err := informer.ForDynamic(f, gizmosGVR)
	require.NoError(t, err)
	require.NoError(t, inf.AddIndexers(indexer.Indexers{"size": bySize}))
	_, err = inf.AddEventHandler(seen.handler(), informer.HandlerOptions{})
	require.NoError(t, err)
	f.Start(ctx)
	require.Equal(t, map[string]bool{"gizmos.dyn.example.com (dynamic)": true}, f.WaitForCacheSync(ctx))

	writeGizmos(ctx, t, gizmos)
	require.Eventually(t, func() bool { return seen.has("delete g2") }, converged, 5*time.Millisecond, "%v", seen.all())
	g1, err := inf.Lister().Get("dyn", "g1")
	require.NoError(t, err)
	replicas, found, err := unstructured.NestedFieldNoCopy(g1.Object, "spec", "replicas")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, int64(3), replicas, "an integer is an int64, as apimachinery decodes it")
	assert.Empty(t, g1.GetManagedFields(), "the transform ran")
	large, err := inf.Indexer().ByIndex("size", "L")
	require.NoError(t, err)
	require.Len(t, large, 1)
	assert.Equal(t, "g1", large[0].(*unstructured.Unstructured).GetName())
	events := seen.all()
	assert.Equal(t, "add g1", events[0], "%v", events)
	assert.Subset(t, events, []string{"update g1", "add g2", "delete g2"})

	deleteCRD(ctx, t, crds)
	endWatches()
	require.Eventually(t, func() bool { return inf.Stats().Errors[reflector.KindNotServed] >= 3 },
		converged, 5*time.Millisecond, "the informer keeps probing")
	notServed := 0
	for _, err := range errs.all() {
		if reflector.KindOf(err) == reflector.KindNotServed {
			notServed++
		}
	}
	assert.Equal(t, 1, notServed, "the deleted CRD is reported once: %v", errs.all())
	_, err = gizmos.Get(ctx, "dyn", "g1", metav1.GetOptions{})
	assert.ErrorIs(t, err, client.ErrUnserved, "the client tells an unserved resource from a missing object")

	createCRD(ctx, t, crds)
	gizmos = discovered(ctx, t, c)
	_, err = gizmos.Create(ctx, gizmo("g3", 1, "S"), metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, err := inf.Lister().Get("dyn", "g3")
		return err == nil
	}, converged, 5*time.Millisecond, "the informer resumes when the CRD is back")
	_, err = inf.Lister().Get("dyn", "g1")
	assert.True(t, apierrors.IsNotFound(err), "the CRD's deletion took its objects, and the relist says so: %v", err)
	deleteCRD(ctx, t, crds)
}

// writeGizmos uses every verb of the dynamic client on gizmos: g1 is
// created, updated (retrying on conflict), merge-patched and read; g2 is
// applied, listed and deleted.
func writeGizmos(ctx context.Context, t *testing.T, gizmos *client.UnstructuredResource) {
	t.Helper()
	_, err := gizmos.Create(ctx, gizmo("g1", 3, "M"), metav1.CreateOptions{})
	require.NoError(t, err)
	err = client.RetryOnConflict(ctx, client.DefaultRetry, func() error {
		cur, err := gizmos.Get(ctx, "dyn", "g1", metav1.GetOptions{})
		if err != nil {
			return err
		}
		require.NoError(t, unstructured.SetNestedField(cur.Object, "L", "spec", "size"))
		_, err = gizmos.Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	require.NoError(t, err)
	patched, err := gizmos.Patch(ctx, "dyn", "g1", types.MergePatchType, []byte(`{"spec":{"colour":"teal"}}`), metav1.PatchOptions{}, "")
	require.NoError(t, err)
	assert.Equal(t, int64(3), patched.Object["spec"].(map[string]any)["replicas"])

	applied, err := gizmos.Apply(ctx, gizmo("g2", 5, "S"), client.ApplyOptions{FieldManager: "dyn-test"})
	require.NoError(t, err)
	require.NotEmpty(t, applied.GetManagedFields())
	assert.Equal(t, "dyn-test", applied.GetManagedFields()[0].Manager)
	items, rv, err := gizmos.List(ctx, "dyn", metav1.ListOptions{})
	require.NoError(t, err)
	assert.NotEmpty(t, rv)
	require.Len(t, items, 2)
	for _, item := range items {
		assert.Equal(t, "Gizmo", item.GetKind(), "list items carry their kind")
	}

	wrong := gizmo("g9", 1, "S")
	wrong.SetKind("Gadget")
	_, err = gizmos.Create(ctx, wrong, metav1.CreateOptions{})
	assert.ErrorIs(t, err, client.ErrInvalidObject, "an object of another kind is refused before it is sent")
	require.NoError(t, gizmos.Delete(ctx, "dyn", "g2", metav1.DeleteOptions{}))
}

func gizmo(name string, replicas int64, size string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "dyn.example.com/v1", "kind": "Gizmo",
		"metadata": map[string]any{"namespace": "dyn", "name": name},
		"spec":     map[string]any{"replicas": replicas, "size": size},
	}}
}

func bySize(obj runtime.Object) ([]string, error) {
	size, _, err := unstructured.NestedString(obj.(*unstructured.Unstructured).Object, "spec", "size")
	return []string{size}, err
}

func createCRD(ctx context.Context, t *testing.T, crds *client.UnstructuredResource) {
	t.Helper()
	crd := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(gizmoCRDv1)}
	_, err := crds.Create(ctx, crd, metav1.CreateOptions{})
	require.NoError(t, err)
}

// discovered waits until the server's discovery lists gizmos (a real
// server takes a moment after the CRD is created) and returns its client.
func discovered(ctx context.Context, t *testing.T, c *client.Client) *client.UnstructuredResource {
	t.Helper()
	var gizmos *client.UnstructuredResource
	require.Eventually(t, func() bool {
		var err error
		gizmos, err = client.ForDynamic(ctx, c, gizmosGVR)
		if err != nil && !errors.Is(err, informer.ErrUnknownResource) {
			t.Fatalf("discovery: %v", err)
		}
		if err != nil {
			return false
		}
		// Served in discovery is not yet served at the path on a real server.
		_, _, err = gizmos.List(ctx, "dyn", metav1.ListOptions{})
		return err == nil
	}, converged, 20*time.Millisecond)
	return gizmos
}

// deleteCRD deletes the CRD and waits until it is gone (a real server
// first deletes its objects).
func deleteCRD(ctx context.Context, t *testing.T, crds *client.UnstructuredResource) {
	t.Helper()
	require.NoError(t, crds.Delete(ctx, "", "gizmos.dyn.example.com", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool {
		_, err := crds.Get(ctx, "", "gizmos.dyn.example.com", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, converged, 20*time.Millisecond)
}

// handlerLog writes down what a dynamic informer's handler hears.
type handlerLog struct {
	mu     sync.Mutex // guards events
	events []string
}

func (l *handlerLog) handler() informer.Handler[*unstructured.Unstructured] {
	return informer.Handler[*unstructured.Unstructured]{
		OnAdd:    func(u *unstructured.Unstructured, _ bool) { l.log("add " + u.GetName()) },
		OnUpdate: func(_, u *unstructured.Unstructured) { l.log("update " + u.GetName()) },
		OnDelete: func(u *unstructured.Unstructured, _ bool) { l.log("delete " + u.GetName()) },
	}
}

func (l *handlerLog) log(s string) { l.mu.Lock(); l.events = append(l.events, s); l.mu.Unlock() }

func (l *handlerLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.events...)
}

func (l *handlerLog) has(s string) bool {
	for _, e := range l.all() {
		if e == s {
			return true
		}
	}
	return false
}
