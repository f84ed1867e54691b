package fakeapi

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestOpenWatchesListsTheWatchesBeingServed: a watch is listed, with its
// namespace and selectors, from the moment the server has it until the
// client goes away.
func TestOpenWatchesListsTheWatchesBeingServed(t *testing.T) {
	srv := startServer(t, Options{})
	require.Empty(t, srv.OpenWatches())
	w1 := openWatch(t, podsURL(srv)+"?watch=true&labelSelector=app%3Dweb", "")
	w2 := openWatch(t, srv.URL()+"/api/v1/nodes?watch=true&fieldSelector=metadata.name%3Dn1", "")
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	nodes := schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	require.Equal(t, []OpenWatch{
		{ID: 1, Resource: pods, Namespace: "ns", LabelSelector: "app=web"},
		{ID: 2, Resource: nodes, FieldSelector: "metadata.name=n1"},
	}, srv.OpenWatches(), "a watch is listed once its response has begun")

	w1.Stop()
	require.Eventually(t, func() bool { return len(srv.OpenWatches()) == 1 }, 10*time.Second, time.Millisecond,
		"the stopped watch is no longer served")
	require.Equal(t, nodes, srv.OpenWatches()[0].Resource)
	w2.Stop()
	require.Eventually(t, func() bool { return len(srv.OpenWatches()) == 0 }, 10*time.Second, time.Millisecond)
}
