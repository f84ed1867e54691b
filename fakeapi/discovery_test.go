package fakeapi

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
)

func TestDiscoveryDocuments(t *testing.T) {
	srv := startServer(t, Options{})
	get := func(path string, into any) {
		t.Helper()
		code, body, _ := do(t, http.MethodGet, srv.URL()+path, "", "")
		require.Equal(t, http.StatusOK, code, "%s: %s", path, body)
		require.NoError(t, json.Unmarshal(body, into))
	}
	var versions metav1.APIVersions
	get("/api", &versions)
	require.Equal(t, []string{"v1"}, versions.Versions)

	var groups metav1.APIGroupList
	get("/apis", &groups)
	require.Len(t, groups.Groups, 20, "every group kube-apiserver serves by default, and CRDs'")
	require.Equal(t, "apps", groups.Groups[0].Name)
	require.Equal(t, "coordination.k8s.io", groups.Groups[1].Name)
	require.Equal(t, "apiextensions.k8s.io", groups.Groups[len(groups.Groups)-1].Name)
	require.Equal(t, "apps/v1", groups.Groups[0].PreferredVersion.GroupVersion)

	var group metav1.APIGroup
	get("/apis/apps", &group)
	require.Equal(t, "apps", group.Name)

	var core metav1.APIResourceList
	get("/api/v1", &core)
	byName := map[string]metav1.APIResource{}
	for _, r := range core.APIResources {
		byName[r.Name] = r
	}
	require.Equal(t, "Pod", byName["pods"].Kind)
	require.True(t, byName["pods"].Namespaced)
	require.Contains(t, byName["pods"].Verbs, "watch")
	require.Equal(t, []string{"po"}, byName["pods"].ShortNames)
	require.False(t, byName["nodes"].Namespaced)
	require.Contains(t, byName, "pods/status")
	require.Contains(t, byName, "endpoints")
	require.NotContains(t, byName, "configmaps/status")

	require.Contains(t, byName, "events")

	var apps metav1.APIResourceList
	get("/apis/apps/v1", &apps)
	require.Equal(t, "apps/v1", apps.GroupVersion)
	require.Equal(t, "v1", apps.APIVersion)
	require.Empty(t, core.APIVersion, "the real server sends no apiVersion in the core group's APIResourceList")
	require.Len(t, apps.APIResources, 12) // 5 resources, the status of 4, and 3 scales

	var coordination metav1.APIResourceList
	get("/apis/coordination.k8s.io/v1", &coordination)
	require.Len(t, coordination.APIResources, 1, "leases, without subresources")
	require.Equal(t, "leases", coordination.APIResources[0].Name)
	require.Equal(t, "Lease", coordination.APIResources[0].Kind)
	require.True(t, coordination.APIResources[0].Namespaced)

	var info version.Info
	get("/version", &info)
	require.Equal(t, "1", info.Major)

	code, _, _ := do(t, http.MethodGet, srv.URL()+"/apis/nope/v1", "", "")
	require.Equal(t, http.StatusNotFound, code)
}

func TestAggregatedDiscovery(t *testing.T) {
	srv := startServer(t, Options{})
	accept := "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;q=0.9"
	for _, tc := range []struct {
		path, group string
	}{{"/api", ""}, {"/apis", "apps"}} {
		code, body, header := do(t, http.MethodGet, srv.URL()+tc.path, "", "", "Accept", accept)
		require.Equal(t, http.StatusOK, code, "%s", body)
		require.Equal(t, "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", header.Get("Content-Type"))
		var list apidiscoveryv2.APIGroupDiscoveryList
		require.NoError(t, json.Unmarshal(body, &list))
		require.Equal(t, "APIGroupDiscoveryList", list.Kind)
		require.NotEmpty(t, list.Items)
		require.Equal(t, tc.group, list.Items[0].Name)
		v := list.Items[0].Versions[0]
		require.Equal(t, apidiscoveryv2.DiscoveryFreshnessCurrent, v.Freshness)
		for _, r := range v.Resources {
			if r.Resource == "deployments" {
				require.Equal(t, apidiscoveryv2.ScopeNamespace, r.Scope)
				require.Equal(t, "scale", r.Subresources[0].Subresource)
				require.Equal(t, "autoscaling", r.Subresources[0].ResponseKind.Group)
			}
		}
	}
	// A client that does not ask for it gets the legacy form.
	code, body, _ := do(t, http.MethodGet, srv.URL()+"/apis", "", "", "Accept", "application/json")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, string(body), `"kind":"APIGroupList"`)
}
