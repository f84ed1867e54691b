package apiresource_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer/apiresource"
)

func TestGuess(t *testing.T) {
	core := corev1.SchemeGroupVersion
	cases := []struct {
		kind          schema.GroupVersionKind
		plural        string
		clusterScoped bool
	}{
		{core.WithKind("Pod"), "pods", false},
		{core.WithKind("Endpoints"), "endpoints", false}, // already plural
		{core.WithKind("Namespace"), "namespaces", true},
		{core.WithKind("Node"), "nodes", true},
		{core.WithKind("PersistentVolume"), "persistentvolumes", true},
		{core.WithKind("PersistentVolumeClaim"), "persistentvolumeclaims", false},
		{appsv1.SchemeGroupVersion.WithKind("Deployment"), "deployments", false},
		{schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Policy"}, "policies", false},
		{schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Ingress"}, "ingresses", false},
		// Scope is known for the built-in kinds only: a Node of another
		// group is namespaced unless described otherwise.
		{schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Node"}, "nodes", false},
	}
	for _, tc := range cases {
		got := apiresource.Guess(tc.kind)
		assert.Equal(t, apiresource.Resource{Kind: tc.kind, Plural: tc.plural, ClusterScoped: tc.clusterScoped}, got, tc.kind)
	}
}

func TestGVRGuessesAnEmptyPlural(t *testing.T) {
	gvk := appsv1.SchemeGroupVersion.WithKind("StatefulSet")
	assert.Equal(t, appsv1.SchemeGroupVersion.WithResource("statefulsets"), apiresource.Resource{Kind: gvk}.GVR())
	assert.Equal(t, appsv1.SchemeGroupVersion.WithResource("sets"), apiresource.Resource{Kind: gvk, Plural: "sets"}.GVR())
}

func TestNewSchemeKnowsWhatEveryPartNeeds(t *testing.T) {
	s := apiresource.NewScheme()
	for _, gvk := range []schema.GroupVersionKind{
		corev1.SchemeGroupVersion.WithKind("PodList"),
		appsv1.SchemeGroupVersion.WithKind("DeploymentList"),
		autoscalingv1.SchemeGroupVersion.WithKind("Scale"),
		metav1.SchemeGroupVersion.WithKind("PartialObjectMetadataList"),
		metav1.SchemeGroupVersion.WithKind("DeleteOptions"),
	} {
		assert.True(t, s.Recognizes(gvk), gvk)
	}
	assert.NotSame(t, s, apiresource.NewScheme(), "each call builds a scheme the caller may change")
}

// A kind becomes a URL through its resource: the scheme names the kind,
// Guess adds the plural and the scope.
func ExampleGuess() {
	for _, kind := range []string{"Pod", "Endpoints", "Node"} {
		r := apiresource.Guess(corev1.SchemeGroupVersion.WithKind(kind))
		fmt.Println(kind, r.GVR().Resource, r.ClusterScoped)
	}
	// Output:
	// Pod pods false
	// Endpoints endpoints false
	// Node nodes true
}
