package bench

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"

	"github.com/seed31a95821/informer/fakeapi"
)

// TestInteropDiscovery checks that client-go's discovery client reads
// fakeapi's discovery documents and /version, and that a RESTMapper built
// from them resolves kinds and short names the way kubectl does.
func TestInteropDiscovery(t *testing.T) {
	for _, format := range wireFormats {
		t.Run(format.name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			srv, err := fakeapi.NewServer(fakeapi.Options{})
			require.NoError(t, err)
			defer srv.Close()
			cs, err := kubernetes.NewForConfig(restConfig(srv, format, &requestLog{}))
			require.NoError(t, err)

			v, err := cs.Discovery().ServerVersion()
			require.NoError(t, err)
			require.Equal(t, "1", v.Major)
			require.NotEmpty(t, v.GitVersion)

			groups, lists, err := cs.Discovery().ServerGroupsAndResources()
			require.NoError(t, err, "a partial discovery failure would also land here")
			requireGroup(t, groups, "", "v1")
			requireGroup(t, groups, "apps", "v1")

			resources := indexResources(lists)
			for _, want := range []struct {
				gv, name, kind string
				namespaced     bool
			}{
				{"v1", "pods", "Pod", true},
				{"v1", "services", "Service", true},
				{"v1", "nodes", "Node", false},
				{"v1", "namespaces", "Namespace", false},
				{"apps/v1", "deployments", "Deployment", true},
			} {
				got, ok := resources[want.gv+"/"+want.name]
				require.True(t, ok, "discovery lacks %s %s", want.gv, want.name)
				require.Equal(t, want.kind, got.Kind, want.name)
				require.Equal(t, want.namespaced, got.Namespaced, want.name)
				require.Subset(t, []string(got.Verbs), []string{"get", "list", "watch", "create", "update", "delete"}, want.name)
			}

			requireRESTMapping(t, cs)
		})
	}
}

// requireGroup asserts discovery lists group with version among its versions.
func requireGroup(t *testing.T, groups []*metav1.APIGroup, group, version string) {
	t.Helper()
	for _, g := range groups {
		if g.Name != group {
			continue
		}
		for _, v := range g.Versions {
			if v.Version == version {
				return
			}
		}
		t.Fatalf("group %q lacks version %q: %+v", group, version, g.Versions)
	}
	t.Fatalf("discovery lacks group %q", group)
}

// indexResources keys every discovered resource by "groupVersion/name".
func indexResources(lists []*metav1.APIResourceList) map[string]metav1.APIResource {
	out := map[string]metav1.APIResource{}
	for _, l := range lists {
		for _, r := range l.APIResources {
			out[l.GroupVersion+"/"+r.Name] = r
		}
	}
	return out
}

// requireRESTMapping resolves what kubectl resolves on "kubectl get deploy":
// a short name to a resource, and a kind to a URL scope.
func requireRESTMapping(t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	cached := memory.NewMemCacheClient(cs.Discovery())
	mapper := restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(cached), cached, nil)

	mapping, err := mapper.RESTMapping(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "v1")
	require.NoError(t, err)
	require.Equal(t, "deployments", mapping.Resource.Resource)
	require.Equal(t, meta.RESTScopeNameNamespace, mapping.Scope.Name())

	gvr, err := mapper.ResourceFor(schema.GroupVersionResource{Resource: "po"})
	require.NoError(t, err, "short name po")
	require.Equal(t, podsGVR, gvr)
}
