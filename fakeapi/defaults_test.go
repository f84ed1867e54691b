package fakeapi

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Which kinds carry metadata.generation, as on kube-apiserver 1.37: those
// with a spec, except Services, Namespaces and Nodes.
func TestGenerationFollowsTheRealStrategies(t *testing.T) {
	srv := startServer(t, Options{})
	om := metav1.ObjectMeta{Namespace: "ns", Name: "x"}
	for _, tc := range []struct {
		obj  runtime.Object
		want int64
	}{
		{&corev1.Pod{ObjectMeta: om}, 1},
		{&appsv1.Deployment{ObjectMeta: om}, 1},
		{&corev1.Service{ObjectMeta: om}, 0},
		{&corev1.ConfigMap{ObjectMeta: om}, 0},
		{&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, 0},
		{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, 0},
	} {
		created, err := srv.Create(tc.obj)
		require.NoError(t, err)
		m, _ := created.(metav1.Object)
		require.Equal(t, tc.want, m.GetGeneration(), "%T", tc.obj)
	}
	svc, err := srv.Update(&corev1.Service{ObjectMeta: om, Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.1"}})
	require.NoError(t, err)
	require.Zero(t, svc.(*corev1.Service).Generation, "a spec change does not start a generation")
}

// A namespace gets its name label, the kubernetes finalizer and phase
// Active, and keeps them through updates that leave them out.
func TestNamespaceDefaults(t *testing.T) {
	srv := startServer(t, Options{})
	created, err := srv.Create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team", Labels: map[string]string{"a": "b"}}})
	require.NoError(t, err)
	ns := created.(*corev1.Namespace)
	require.Equal(t, map[string]string{"a": "b", corev1.LabelMetadataName: "team"}, ns.Labels)
	require.Equal(t, []corev1.FinalizerName{corev1.FinalizerKubernetes}, ns.Spec.Finalizers)
	require.Equal(t, corev1.NamespaceActive, ns.Status.Phase)

	updated, err := srv.Update(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team", Labels: map[string]string{"c": "d"}}})
	require.NoError(t, err)
	ns = updated.(*corev1.Namespace)
	require.Equal(t, map[string]string{"c": "d", corev1.LabelMetadataName: "team"}, ns.Labels)
	require.Equal(t, []corev1.FinalizerName{corev1.FinalizerKubernetes}, ns.Spec.Finalizers)
	require.Equal(t, corev1.NamespaceActive, ns.Status.Phase)
}

// A Deployment's /status write, unlike a pod's, cannot change its labels.
func TestDeploymentStatusWriteKeepsLabels(t *testing.T) {
	srv := startServer(t, Options{})
	createNamespace(t, srv, "ns")
	base := srv.URL() + "/apis/apps/v1/namespaces/ns/deployments"
	code, body, _ := do(t, http.MethodPost, base, mediaJSON,
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","labels":{"app":"v1"}},`+
			`"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`)
	require.Equal(t, http.StatusCreated, code, "%s", body)
	code, body, _ = do(t, http.MethodPut, base+"/d/status", mediaJSON,
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","labels":{"app":"v2"},"annotations":{"a":"b"}},"status":{"replicas":3}}`)
	require.Equal(t, http.StatusOK, code, "%s", body)
	d := decodeJSON(t, body).(*appsv1.Deployment)
	require.Equal(t, int32(3), d.Status.Replicas)
	require.Equal(t, "v1", d.Labels["app"])
	require.Equal(t, "b", d.Annotations["a"], "other metadata is the client's")
}
