package fakeapi

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestHTTPPodIsDefaultedAndValidated(t *testing.T) {
	srv := startServer(t, Options{})
	base := srv.URL() + "/api/v1/namespaces/default/pods"
	code, body, _ := do(t, http.MethodPost, base, mediaJSON,
		`{"metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"nginx"}]},"status":{"phase":"Running"}}`)
	require.Equal(t, http.StatusCreated, code, "%s", body)
	p := decodeJSON(t, body).(*corev1.Pod)
	require.Equal(t, corev1.PodPending, p.Status.Phase, "a new pod's status is the server's")
	require.Equal(t, corev1.PodQOSBestEffort, p.Status.QOSClass)
	require.Equal(t, corev1.RestartPolicyAlways, p.Spec.RestartPolicy)
	require.Equal(t, corev1.PullAlways, p.Spec.Containers[0].ImagePullPolicy, "an untagged image is :latest")
	require.Len(t, p.Spec.Tolerations, 2)

	for _, tc := range []struct{ body, field string }{
		{`{"metadata":{"name":"b"},"spec":{}}`, "spec.containers"},
		{`{"metadata":{"name":"b"},"spec":{"containers":[{"name":"c"}]}}`, "spec.containers[0].image"},
		{`{"metadata":{"name":"b"},"spec":{"containers":[{"image":"x"}]}}`, "spec.containers[0].name"},
	} {
		code, body, _ := do(t, http.MethodPost, base, mediaJSON, tc.body)
		require.Equal(t, http.StatusUnprocessableEntity, code, "%s", body)
		st := decodeStatus(t, body)
		require.Equal(t, metav1.StatusReasonInvalid, st.Reason)
		require.Equal(t, tc.field, st.Details.Causes[0].Field)
		require.Equal(t, metav1.CauseTypeFieldValueRequired, st.Details.Causes[0].Type)
	}
}

func TestHTTPNamespaceLifecycle(t *testing.T) {
	srv := startServer(t, Options{})
	pods := srv.URL() + "/api/v1/namespaces/team/pods"
	code, body, _ := do(t, http.MethodPost, pods, mediaJSON, podJSON)
	require.Equal(t, http.StatusNotFound, code, "%s", body)
	require.Equal(t, `namespaces "team" not found`, decodeStatus(t, body).Message)

	code, body, _ = do(t, http.MethodPost, srv.URL()+"/api/v1/namespaces", mediaJSON, `{"metadata":{"name":"team"}}`)
	require.Equal(t, http.StatusCreated, code, "%s", body)
	code, body, _ = do(t, http.MethodPost, pods, mediaJSON, podJSON)
	require.Equal(t, http.StatusCreated, code, "%s", body)

	// Deleting the namespace deletes what is in it, then the namespace.
	code, body, _ = do(t, http.MethodDelete, srv.URL()+"/api/v1/namespaces/team", "", "")
	require.Equal(t, http.StatusOK, code, "%s", body)
	objs, err := srv.Objects(corev1.SchemeGroupVersion.WithResource("pods"))
	require.NoError(t, err)
	require.Empty(t, objs)
	code, _, _ = do(t, http.MethodPost, pods, mediaJSON, podJSON)
	require.Equal(t, http.StatusNotFound, code, "a namespace that was deleted takes no new objects")
}
