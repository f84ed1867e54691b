package discovery_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/discovery"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/rest"
)

var noBound = discovery.Options{MinRefreshInterval: -1}

// Every resource fakeapi serves by default, in every group, is found
// through discovery with its plural and scope, in both forms of the
// documents, and the two forms describe the server identically.
func TestEveryGroupIsListedThroughDiscovery(t *testing.T) {
	srv := serve(t, fakeapi.Options{})
	ctx := context.Background()
	snapshots := map[bool]*discovery.Snapshot{}
	for _, legacy := range []bool{false, true} {
		p := newProxy(t, srv.URL(), legacy, nil)
		c := newClient(t, rest.Config{Host: p.url}, noBound)
		snap, err := c.Snapshot(ctx)
		require.NoError(t, err)
		require.Equal(t, !legacy, snap.Aggregated)
		require.Empty(t, snap.Failed)
		snapshots[legacy] = snap
		groups := map[string]bool{}
		for _, want := range fakeapi.DefaultResources() {
			groups[want.Kind.Group] = true
			got, err := c.Resource(ctx, want.Kind)
			require.NoError(t, err, want.Kind)
			assert.Equal(t, want.Resource, got, "legacy=%v", legacy)
			found := false
			for _, r := range snap.Resources(want.Kind.GroupVersion()) {
				found = found || (r.Resource == want.GVR().Resource && r.ResponseKind.Kind == want.Kind.Kind)
			}
			assert.True(t, found, "%s in %s", want.GVR().Resource, want.Kind.GroupVersion())
		}
		for _, g := range snap.Groups {
			delete(groups, g.Name)
		}
		assert.Empty(t, groups, "groups fakeapi serves that discovery does not list")
	}
	assert.Equal(t, snapshots[false].Groups, snapshots[true].Groups, "aggregated and legacy discovery differ")
}

// The served set covers every group of k8s.io/api that kube-apiserver
// serves by default (fakeapi's table says which): one resource of each.
func TestEachGroupHasAResource(t *testing.T) {
	c := newClient(t, rest.Config{Host: serve(t, fakeapi.Options{}).URL()}, noBound)
	snap, err := c.Snapshot(context.Background())
	require.NoError(t, err)
	var names []string
	for _, g := range snap.Groups {
		names = append(names, g.Name)
		require.NotEmpty(t, g.Versions, g.Name)
		require.NotEmpty(t, g.Versions[0].Resources, g.Name)
	}
	for _, group := range []string{"", "admissionregistration.k8s.io", "apps", "autoscaling", "batch",
		"certificates.k8s.io", "coordination.k8s.io", "discovery.k8s.io", "flowcontrol.apiserver.k8s.io",
		"networking.k8s.io", "node.k8s.io", "policy", "rbac.authorization.k8s.io", "resource.k8s.io",
		"scheduling.k8s.io", "storage.k8s.io", "storagemigration.k8s.io", "apiextensions.k8s.io"} {
		assert.Contains(t, names, group)
	}
}

// The mapper answers both ways, with scope and the preferred version.
func TestMapperKindsResourcesAndScopes(t *testing.T) {
	c := newClient(t, rest.Config{Host: serve(t, fakeapi.Options{}).URL()}, noBound)
	m := c.Mapper()
	gvk, err := m.KindFor(schema.GroupVersionResource{Resource: "deployments"})
	require.NoError(t, err)
	assert.Equal(t, appsv1.SchemeGroupVersion.WithKind("Deployment"), gvk)

	mapping, err := m.RESTMapping(schema.GroupKind{Kind: "Node"})
	require.NoError(t, err)
	assert.Equal(t, corev1.SchemeGroupVersion.WithResource("nodes"), mapping.Resource)
	assert.Equal(t, meta.RESTScopeNameRoot, mapping.Scope.Name())

	mapping, err = m.RESTMapping(schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"})
	require.NoError(t, err)
	assert.Equal(t, "v2", mapping.Resource.Version, "the preferred version")
	assert.Equal(t, meta.RESTScopeNameNamespace, mapping.Scope.Name())

	singular, err := m.ResourceSingularizer("statefulsets")
	require.NoError(t, err)
	assert.Equal(t, "statefulset", singular)

	_, err = m.RESTMapping(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "v1beta1")
	assert.True(t, meta.IsNoMatchError(err), "a version the server does not serve: %v", err)
}

const gadgetCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"gadgets.example.com"},
"spec":{"group":"example.com","scope":"Cluster",
 "names":{"plural":"gadgets","singular":"gadget","kind":"Gadget"},
 "versions":[{"name":"v1","served":true,"storage":true,
  "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`

func createGadgetCRD(t *testing.T, srv *fakeapi.Server) {
	t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(t, u.UnmarshalJSON([]byte(gadgetCRD)))
	_, err := srv.Create(u)
	require.NoError(t, err)
}

var gadgetKind = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gadget"}

// A CustomResourceDefinition created after the first read is found: the
// miss refreshes the documents once (two requests, /api and /apis).
func TestCRDCreatedLaterIsFoundAfterARefreshOnMiss(t *testing.T) {
	srv := serve(t, fakeapi.Options{})
	p := newProxy(t, srv.URL(), false, nil)
	c := newClient(t, rest.Config{Host: p.url}, noBound)
	ctx := context.Background()
	_, err := c.Snapshot(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 2, p.requests.Load())

	createGadgetCRD(t, srv)
	got, err := c.Resource(ctx, gadgetKind)
	require.NoError(t, err)
	assert.Equal(t, apiresource.Resource{Kind: gadgetKind, Plural: "gadgets", ClusterScoped: true}, got)
	assert.EqualValues(t, 4, p.requests.Load(), "one refresh")

	_, err = c.Resource(ctx, gadgetKind)
	require.NoError(t, err)
	assert.EqualValues(t, 4, p.requests.Load(), "a hit reads nothing")
}

// A kind created just after a read (a CRD the program has just made) is
// found by the first miss, through the one early read each regular read
// grants; a storm of misses for a kind nobody serves then costs nothing
// more until the interval is up: two reads in all, four requests.
func TestMissStormIsBoundedByTheRefreshInterval(t *testing.T) {
	srv := serve(t, fakeapi.Options{})
	p := newProxy(t, srv.URL(), false, nil)
	c := newClient(t, rest.Config{Host: p.url}, discovery.Options{MinRefreshInterval: time.Hour})
	ctx := context.Background()
	_, err := c.Snapshot(ctx)
	require.NoError(t, err)
	createGadgetCRD(t, srv) // served now, but not yet read
	_, err = c.Resource(ctx, gadgetKind)
	require.NoError(t, err, "the first miss reads again, early")
	nobody := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Nobody"}
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			_, err := c.Resource(ctx, nobody)
			assert.True(t, meta.IsNoMatchError(err), "%v", err)
		})
	}
	wg.Wait()
	assert.EqualValues(t, 4, p.requests.Load(), "the first read and one early read reached the server")
}

// A server that fails discovery is asked again only after the backoff;
// meanwhile every lookup fails at once with ErrUnreachable.
func TestUnreachableBacksOff(t *testing.T) {
	srv := serve(t, fakeapi.Options{})
	p := newProxy(t, srv.URL(), false, func(string) bool { return true })
	c := newClient(t, rest.Config{Host: p.url}, discovery.Options{MinRefreshInterval: time.Hour})
	ctx := context.Background()
	for range 5 {
		_, err := c.Resource(ctx, corev1.SchemeGroupVersion.WithKind("Pod"))
		require.ErrorIs(t, err, discovery.ErrUnreachable)
	}
	assert.EqualValues(t, 1, p.requests.Load(), "one failed read, then the backoff")
}

// In the legacy form, a group version whose list fails (an aggregated API
// server that is down) is unknown, not absent: its kinds are
// ErrUnreachable, the others are found.
func TestLegacyGroupVersionFailureIsUnreachable(t *testing.T) {
	srv := serve(t, fakeapi.Options{})
	p := newProxy(t, srv.URL(), true, func(path string) bool { return path == "/apis/apps/v1" })
	c := newClient(t, rest.Config{Host: p.url}, noBound)
	ctx := context.Background()
	_, err := c.Resource(ctx, appsv1.SchemeGroupVersion.WithKind("Deployment"))
	require.ErrorIs(t, err, discovery.ErrUnreachable)
	snap, err := c.Snapshot(ctx)
	require.NoError(t, err)
	require.Contains(t, snap.Failed, appsv1.SchemeGroupVersion)
	_, err = c.Resource(ctx, corev1.SchemeGroupVersion.WithKind("Pod"))
	require.NoError(t, err)
}

// A discovery document larger than MaxObjectBytes is refused, not read.
func TestOversizeDocumentIsRefused(t *testing.T) {
	c := newClient(t, rest.Config{Host: serve(t, fakeapi.Options{}).URL(), MaxObjectBytes: 512}, noBound)
	_, err := c.Snapshot(context.Background())
	require.ErrorIs(t, err, discovery.ErrUnreachable)
	require.ErrorIs(t, err, rest.ErrObjectTooLarge)
}

// Concurrent first lookups share one read.
func TestConcurrentLookupsShareOneRead(t *testing.T) {
	srv := serve(t, fakeapi.Options{})
	p := newProxy(t, srv.URL(), false, nil)
	c := newClient(t, rest.Config{Host: p.url}, discovery.Options{MinRefreshInterval: time.Hour})
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			_, err := c.Resource(context.Background(), corev1.SchemeGroupVersion.WithKind("Pod"))
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	assert.EqualValues(t, 2, p.requests.Load())
}

// The resolver's rule: an override wins without a request; discovery
// answers next; a guess only when discovery cannot be read; a kind
// discovery does not list is an error, not a guess.
func TestResolverOrder(t *testing.T) {
	srv := serve(t, fakeapi.Options{})
	p := newProxy(t, srv.URL(), false, nil)
	c := newClient(t, rest.Config{Host: p.url}, noBound)
	ctx := context.Background()
	pod := corev1.SchemeGroupVersion.WithKind("Pod")
	override := apiresource.Resource{Kind: pod, Plural: "pods-by-override", ClusterScoped: true}

	got, err := discovery.Resolver{Overrides: []apiresource.Resource{override}, Discovery: c}.Resource(ctx, pod)
	require.NoError(t, err)
	assert.Equal(t, override, got)
	assert.Zero(t, p.requests.Load(), "an override needs no discovery")

	got, err = discovery.Resolver{Discovery: c}.Resource(ctx, gadgetKind)
	assert.True(t, meta.IsNoMatchError(err), "not served is an error, not a guess: %v %v", got, err)

	createGadgetCRD(t, srv)
	got, err = discovery.Resolver{Discovery: c}.Resource(ctx, gadgetKind)
	require.NoError(t, err)
	assert.True(t, got.ClusterScoped, "discovery's scope, which the guess would get wrong")

	dead := newClient(t, rest.Config{Host: "http://127.0.0.1:1"}, noBound)
	got, err = discovery.Resolver{Discovery: dead}.Resource(ctx, gadgetKind)
	require.NoError(t, err)
	assert.Equal(t, apiresource.Guess(gadgetKind), got, "unreachable: the guess")

	got, err = discovery.Resolver{}.Resource(ctx, gadgetKind)
	require.NoError(t, err)
	assert.Equal(t, apiresource.Guess(gadgetKind), got, "no server: the guess")
}

// A snapshot's resources carry what the server said, subresources included.
func TestSnapshotKeepsSubresources(t *testing.T) {
	c := newClient(t, rest.Config{Host: serve(t, fakeapi.Options{}).URL()}, noBound)
	snap, err := c.Snapshot(context.Background())
	require.NoError(t, err)
	var deployments *apidiscoveryv2.APIResourceDiscovery
	for _, r := range snap.Resources(appsv1.SchemeGroupVersion) {
		if r.Resource == "deployments" {
			deployments = &r
		}
	}
	require.NotNil(t, deployments)
	var subs []string
	for _, s := range deployments.Subresources {
		subs = append(subs, s.Subresource)
	}
	assert.ElementsMatch(t, []string{"scale", "status"}, subs)
}

// A server that answers every path with the same object (a misrouted
// proxy, a hostile server) is not a server that serves nothing: its
// documents are refused as not discovery documents.
func TestNotADiscoveryDocumentIsRefused(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Service","apiVersion":"v1","metadata":{"name":"a"}}`))
	}))
	defer ts.Close()
	c := newClient(t, rest.Config{Host: ts.URL}, noBound)
	_, err := c.Snapshot(context.Background())
	require.ErrorIs(t, err, discovery.ErrUnreachable)
	require.ErrorContains(t, err, `a "Service" where a APIVersions was expected`)
}

// From a resource to its kind and scope, for callers that start from a
// GroupVersionResource (dynamic informers and clients): an override for it
// wins, discovery answers next, and with no discovery there is no guess.
func TestResolverByResource(t *testing.T) {
	srv := serve(t, fakeapi.Options{})
	c := newClient(t, rest.Config{Host: srv.URL()}, noBound)
	ctx := context.Background()
	gadgets := gadgetKind.GroupVersion().WithResource("gadgets")

	_, err := discovery.Resolver{Discovery: c}.ByResource(ctx, gadgets)
	assert.True(t, meta.IsNoMatchError(err), "%v", err)
	createGadgetCRD(t, srv)
	got, err := discovery.Resolver{Discovery: c}.ByResource(ctx, gadgets)
	require.NoError(t, err)
	assert.Equal(t, apiresource.Resource{Kind: gadgetKind, Plural: "gadgets", ClusterScoped: true}, got)

	override := apiresource.Resource{Kind: gadgetKind.GroupVersion().WithKind("Widget"), Plural: "gadgets"}
	got, err = discovery.Resolver{Overrides: []apiresource.Resource{override}, Discovery: c}.ByResource(ctx, gadgets)
	require.NoError(t, err)
	assert.Equal(t, override, got)

	_, err = discovery.Resolver{}.ByResource(ctx, gadgets)
	require.ErrorIs(t, err, discovery.ErrUnreachable)
}
