package fakeapi

import (
	"testing"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer/apiresource"
)

func TestResourceRegistration(t *testing.T) {
	cases := map[string]ServedResource{
		"kind not in scheme":       {Resource: apiresource.Resource{Kind: batchv1.SchemeGroupVersion.WithKind("Job"), ClusterScoped: true}},
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
	scheme := apiresource.NewScheme()
	require.NoError(t, batchv1.AddToScheme(scheme))
	srv := startServer(t, Options{Scheme: scheme, Resources: []ServedResource{
		{Resource: apiresource.Resource{Kind: batchv1.SchemeGroupVersion.WithKind("Job")}},
	}})
	_, err := srv.Create(&batchv1.Job{})
	require.Error(t, err, "validation still applies")
	groups := srv.apiGroups()
	require.Len(t, groups, 4)
	require.Equal(t, "apps", groups[0].Name)
	require.Equal(t, "coordination.k8s.io", groups[1].Name)
	require.Equal(t, "batch", groups[2].Name)
	require.Equal(t, "apiextensions.k8s.io", groups[3].Name, "CRDs are always served")
}
