package rest

// The harness of this package's tests: a recording test server, and
// testLW, a stand-in for the ListerWatcher the transport tests were first
// written against (reflector/wire cannot be imported here: it imports
// this package). testLW.List sends what a ListerWatcher's list sends, one
// GET of the pods collection through a Client, and returns the error the
// ListerWatcher would.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podsGVR is the resource the tests list.
var podsGVR = corev1.SchemeGroupVersion.WithResource("pods")

// recordedRequest is what a test server saw.
type recordedRequest struct {
	Path   string
	Query  map[string][]string
	Header http.Header
}

// testServer is an httptest server whose handler is supplied per test and
// which records every request.
type testServer struct {
	*httptest.Server
	mu       sync.Mutex // guards requests
	requests []recordedRequest
}

func newTestServer(t *testing.T, handler http.HandlerFunc) *testServer {
	t.Helper()
	ts := &testServer{}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.mu.Lock()
		ts.requests = append(ts.requests, recordedRequest{Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone()})
		ts.mu.Unlock()
		handler(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts
}

func (ts *testServer) lastRequest(t *testing.T) recordedRequest {
	t.Helper()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	require.NotEmpty(t, ts.requests)
	return ts.requests[len(ts.requests)-1]
}

// serveBody answers with one complete body.
func serveBody(contentType string, code int, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(code)
		_, _ = w.Write(body)
	}
}

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
func newTestLW(t *testing.T, ts *testServer, mutate func(*Config)) *testLW {
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

// podListJSON is a small pod list, as a server sends it in JSON.
func podListJSON(t *testing.T) []byte {
	t.Helper()
	b, err := json.Marshal(&corev1.PodList{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"},
		ListMeta: metav1.ListMeta{ResourceVersion: "1"},
		Items:    []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "pod-0", ResourceVersion: "10"}}},
	})
	require.NoError(t, err)
	return b
}
