package discovery_test

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/integration/realapi"
	"github.com/seed31a95821/informer/rest"
)

// Against the real kube-apiserver (skipped under -short): its aggregated
// discovery is read; fakeapi serves every listable resource of every group
// it serves, at the same plural and scope (the two exceptions are
// fakeapi's, explained at builtinGroups); and a CRD created at run time is
// found by a lookup that misses, once the server has published it.
func TestRealAPIServerDiscovery(t *testing.T) {
	cluster := realapi.Start(t)
	real := newClient(t, rest.Config{Host: cluster.URL, BearerToken: cluster.Token, CAFile: cluster.CAFile}, noBound)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	snap, err := real.Snapshot(ctx)
	require.NoError(t, err)
	require.True(t, snap.Aggregated, "kube-apiserver 1.37 serves aggregated discovery")

	fake := newClient(t, rest.Config{Host: serve(t, fakeapi.Options{}).URL()}, noBound)
	fakeSnap, err := fake.Snapshot(ctx)
	require.NoError(t, err)
	notInFakeapi := []schema.GroupVersionResource{
		{Group: "events.k8s.io", Version: "v1", Resource: "events"},               // a second view of core events
		{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}, // kube-aggregator's, not k8s.io/api's
	}
	for _, g := range snap.Groups {
		v := g.Versions[0] // the preferred version
		gv := schema.GroupVersion{Group: g.Name, Version: v.Version}
		for _, r := range v.Resources {
			gvr := gv.WithResource(r.Resource)
			if !slices.Contains(r.Verbs, "list") || slices.Contains(notInFakeapi, gvr) {
				continue
			}
			found := false
			for _, f := range fakeSnap.Resources(gv) {
				if f.Resource == r.Resource {
					found = true
					assert.Equal(t, r.Scope, f.Scope, gvr)
					assert.Equal(t, r.ResponseKind.Kind, f.ResponseKind.Kind, gvr)
				}
			}
			assert.True(t, found, "fakeapi does not serve %s", gvr)
		}
	}

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cluster.URL+"/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
		bytes.NewReader([]byte(gadgetCRD)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := cluster.HTTPClient().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	// The server publishes a new CRD in discovery a moment after creating
	// it: each lookup until then is a miss that reads discovery again.
	require.Eventually(t, func() bool {
		got, err := real.Resource(ctx, gadgetKind)
		return err == nil && got.Plural == "gadgets" && got.ClusterScoped
	}, 30*time.Second, 100*time.Millisecond)
}
