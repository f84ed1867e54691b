package fakeapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/fakeapi/internal/openapi"
)

func TestResourceRegistration(t *testing.T) {
	cases := map[string]ServedResource{
		"kind not in scheme":       {Resource: apiresource.Resource{Kind: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Nope"}, ClusterScoped: true}},
		"status without field":     {Resource: apiresource.Resource{Kind: corev1.SchemeGroupVersion.WithKind("ConfigMap"), Plural: "cms", ClusterScoped: true}, StatusSubresource: true},
		"duplicate resource":       {Resource: apiresource.Resource{Kind: corev1.SchemeGroupVersion.WithKind("Pod"), ClusterScoped: true}},
		"meta type without a list": {Resource: apiresource.Resource{Kind: schema.GroupVersionKind{Group: "meta.k8s.io", Version: "v1", Kind: "Table"}, ClusterScoped: true}},
	}
	for name, r := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := NewServer(Options{Resources: []ServedResource{r}})
			require.Error(t, err)
		})
	}
}

func TestPluralNames(t *testing.T) {
	plurals := map[string]string{}
	for _, r := range DefaultResources() {
		plurals[r.Kind.Kind] = r.GVR().Resource
	}
	require.Equal(t, "pods", plurals["Pod"])
	require.Equal(t, "endpoints", plurals["Endpoints"])
	require.Equal(t, "daemonsets", plurals["DaemonSet"])
	require.Equal(t, "statefulsets", plurals["StatefulSet"])
}

func TestCustomSchemeServesOnlyWhatItKnows(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{metav1.AddMetaToScheme, corev1.AddToScheme,
		appsv1.AddToScheme, autoscalingv1.AddToScheme, coordinationv1.AddToScheme, batchv1.AddToScheme} {
		require.NoError(t, add(scheme))
	}
	srv := startServer(t, Options{Scheme: scheme})
	_, err := srv.Create(&batchv1.Job{})
	require.Error(t, err, "validation still applies")
	groups := srv.apiGroups()
	require.Len(t, groups, 4)
	require.Equal(t, "apps", groups[0].Name)
	require.Equal(t, "coordination.k8s.io", groups[1].Name)
	require.Equal(t, "batch", groups[2].Name)
	require.Equal(t, "apiextensions.k8s.io", groups[3].Name, "CRDs are always served")
}

// Every default resource lives where kube-apiserver serves it: its
// recorded OpenAPI document (openapi/, the real server's own) has a path
// for the collection, under /namespaces/{namespace}/ exactly when the
// resource is namespaced. This also checks apiresource.Guess's plurals and
// its list of cluster-scoped kinds, which the table relies on.
func TestDefaultResourcesHaveTheRealScopes(t *testing.T) {
	var docs openapi.Documents
	require.NoError(t, docs.Load(nil))
	rec := httptest.NewRecorder()
	require.True(t, docs.Serve(rec, httptest.NewRequest(http.MethodGet, "/openapi/v2", nil)))
	require.Equal(t, http.StatusOK, rec.Code)
	var spec struct {
		Paths map[string]json.RawMessage `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &spec))
	for _, r := range DefaultResources() {
		gvr := r.GVR()
		prefix := "/apis/" + gvr.Group + "/" + gvr.Version
		if gvr.Group == "" {
			prefix = "/api/" + gvr.Version
		}
		_, namespaced := spec.Paths[prefix+"/namespaces/{namespace}/"+gvr.Resource]
		_, served := spec.Paths[prefix+"/"+gvr.Resource]
		assert.True(t, served, "%s is not served by kube-apiserver", gvr)
		assert.Equal(t, namespaced, !r.ClusterScoped, "%s: the scope", gvr)
	}
}
