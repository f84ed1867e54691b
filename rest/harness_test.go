package rest

// The harness of this package's tests (the PKI and the test servers are
// internal/testserver's): testLW, a stand-in for the ListerWatcher the
// transport tests were first written against (reflector/wire cannot be
// imported here: it imports this package). testLW.List sends what a
// ListerWatcher's list sends, one GET of the pods collection through a
// Client, and returns the error the ListerWatcher would.

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/seed31a95821/informer/internal/testserver"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podsGVR is the resource the tests list.
var podsGVR = corev1.SchemeGroupVersion.WithResource("pods")

// testLW lists pods through a Client.
type testLW struct{ *Client }

// newLister builds a testLW on a Client for cfg.
func newLister(cfg Config) (*testLW, error) {
	c, err := New(cfg)
	if err != nil {
		return nil, err
	}
	return &testLW{c}, nil
}

// newTestLW builds a testLW against ts; tests override Config fields
// through mutate.
func newTestLW(t *testing.T, ts *testserver.Recorder, mutate func(*Config)) *testLW {
	t.Helper()
	cfg := Config{Host: ts.URL}
	if mutate != nil {
		mutate(&cfg)
	}
	lw, err := newLister(cfg)
	require.NoError(t, err)
	t.Cleanup(lw.CloseIdleConnections)
	return lw
}

// List sends one list request and returns the error a ListerWatcher would
// (the body of a 2xx is read, bounded, and dropped).
func (lw *testLW) List(ctx context.Context, _ metav1.ListOptions) (struct{}, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, lw.URL(podsGVR, "").String(), nil)
	if err != nil {
		return struct{}{}, err
	}
	req.Header.Set("Accept", AcceptHeader(lw.cfg.ContentType, true))
	resp, err := lw.Do(req)
	if err != nil {
		return struct{}{}, fmt.Errorf("list pods: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return struct{}{}, lw.Error(resp, "list", podsGVR.GroupResource())
	}
	_, err = ReadBody(resp, lw.cfg.MaxObjectBytes)
	return struct{}{}, err
}
