package fakeapi

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
)

// Leases are what package leaderelection elects with: they must round-trip
// in JSON and protobuf, and an update carrying a stale resourceVersion
// must be refused with 409, the optimistic concurrency two candidates race
// on.
func TestLeases(t *testing.T) {
	srv := startServer(t, Options{})
	url := srv.URL() + "/apis/coordination.k8s.io/v1/namespaces/default/leases"
	code, body, _ := do(t, http.MethodPost, url, mediaJSON,
		`{"metadata":{"name":"ctl"},"spec":{"holderIdentity":"a","leaseDurationSeconds":15,"leaseTransitions":0}}`)
	require.Equal(t, http.StatusCreated, code, "%s", body)
	created := decodeJSON(t, body).(*coordinationv1.Lease)

	code, body, header := do(t, http.MethodGet, url+"/ctl", "", "", "Accept", mediaProtobuf)
	require.Equal(t, http.StatusOK, code, "%s", body)
	require.Equal(t, mediaProtobuf, header.Get("Content-Type"))
	got := decodeJSON(t, body).(*coordinationv1.Lease) // the universal deserializer reads protobuf too
	require.Equal(t, "a", *got.Spec.HolderIdentity)
	require.Equal(t, int32(15), *got.Spec.LeaseDurationSeconds)

	update := func(rv, holder string) (int, []byte) {
		code, body, _ := do(t, http.MethodPut, url+"/ctl", mediaJSON,
			`{"metadata":{"name":"ctl","resourceVersion":"`+rv+`"},"spec":{"holderIdentity":"`+holder+`"}}`)
		return code, body
	}
	code, body = update(created.ResourceVersion, "b")
	require.Equal(t, http.StatusOK, code, "%s", body)
	code, body = update(created.ResourceVersion, "c")
	require.Equal(t, http.StatusConflict, code, "a stale resourceVersion loses: %s", body)

	code, body, _ = do(t, http.MethodGet, url, "", "", "Accept", tableAccept)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, string(body), `"cells":["ctl","b",`)
}
