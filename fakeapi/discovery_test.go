package fakeapi

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
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
	require.Len(t, groups.Groups, 1)
	require.Equal(t, "apps", groups.Groups[0].Name)
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

	var apps metav1.APIResourceList
	get("/apis/apps/v1", &apps)
	require.Equal(t, "apps/v1", apps.GroupVersion)
	require.Len(t, apps.APIResources, 8) // 4 resources and their status

	var info version.Info
	get("/version", &info)
	require.Equal(t, "1", info.Major)

	code, _, _ := do(t, http.MethodGet, srv.URL()+"/apis/nope/v1", "", "")
	require.Equal(t, http.StatusNotFound, code)
}
