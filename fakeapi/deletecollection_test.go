package fakeapi

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

func TestDeleteCollection(t *testing.T) {
	srv := startServer(t, Options{})
	base := srv.URL() + "/api/v1/namespaces/default/configmaps"
	for _, cm := range []string{`{"metadata":{"name":"a","labels":{"x":"1"}}}`, `{"metadata":{"name":"b","labels":{"x":"2"}}}`,
		`{"metadata":{"name":"c","labels":{"x":"1"},"finalizers":["example.com/hold"]}}`} {
		code, body, _ := do(t, http.MethodPost, base, mediaJSON, cm)
		require.Equal(t, http.StatusCreated, code, "%s", body)
	}
	code, body, _ := do(t, http.MethodDelete, base+"?labelSelector=x%3D1", "", "")
	require.Equal(t, http.StatusOK, code, "%s", body)
	list := decodeJSON(t, body).(*corev1.ConfigMapList)
	require.Len(t, list.Items, 2, "the answer lists what was deleted")
	objs, err := srv.Objects(corev1.SchemeGroupVersion.WithResource("configmaps"))
	require.NoError(t, err)
	require.Len(t, objs, 2, "b is left, and c, held by its finalizer")
	require.NotNil(t, objs[1].(*corev1.ConfigMap).DeletionTimestamp)

	code, _, _ = do(t, http.MethodDelete, srv.URL()+"/api/v1/namespaces", "", "")
	require.Equal(t, http.StatusMethodNotAllowed, code, "namespaces have no deletecollection")
	code, _, _ = do(t, http.MethodDelete, srv.URL()+"/api/v1/configmaps", "", "")
	require.Equal(t, http.StatusMethodNotAllowed, code, "nor all namespaces at once")
}
