package fakeapi

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

func TestFinalizersHoldDeletion(t *testing.T) {
	srv := startServer(t, Options{})
	base := srv.URL() + "/api/v1/namespaces/default/configmaps"
	code, body, _ := do(t, http.MethodPost, base, mediaJSON, `{"metadata":{"name":"held","finalizers":["example.com/hold"]}}`)
	require.Equal(t, http.StatusCreated, code, "%s", body)

	code, body, _ = do(t, http.MethodDelete, base+"/held", "", "")
	require.Equal(t, http.StatusOK, code, "%s", body)
	cm := decodeJSON(t, body).(*corev1.ConfigMap)
	require.NotNil(t, cm.DeletionTimestamp, "marked, not deleted")
	code, _, _ = do(t, http.MethodGet, base+"/held", "", "")
	require.Equal(t, http.StatusOK, code, "still there")

	code, body, _ = do(t, http.MethodPatch, base+"/held", mediaMerge, `{"metadata":{"finalizers":["example.com/hold","example.com/more"]}}`)
	require.Equal(t, http.StatusUnprocessableEntity, code, "no new finalizers while deleting: %s", body)

	code, body, _ = do(t, http.MethodPatch, base+"/held", mediaMerge, `{"metadata":{"finalizers":null}}`)
	require.Equal(t, http.StatusOK, code, "%s", body)
	code, _, _ = do(t, http.MethodGet, base+"/held", "", "")
	require.Equal(t, http.StatusNotFound, code, "gone with its last finalizer")
	writes := srv.Writes()
	require.Equal(t, []string{"ADDED", "MODIFIED", "DELETED"}, []string{string(writes[len(writes)-3].Type),
		string(writes[len(writes)-2].Type), string(writes[len(writes)-1].Type)})
}
