package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed31a95821/informer/metrics"
	"github.com/seed31a95821/informer/workqueue"
)

// TestProbes: /readyz follows the caches, /healthz always answers, and
// /metrics serves the registry in the text format.
func TestProbes(t *testing.T) {
	reg := new(metrics.Registry)
	q := workqueue.New(workqueue.Options[string]{Name: "summarize", Metrics: reg})
	defer q.ShutDown()
	q.Add("shop/web")
	var ready atomic.Bool
	srv := httptest.NewServer(probes(reg, ready.Load))
	defer srv.Close()

	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(body)
	}
	code, _ := get("/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code, "not synced yet")
	ready.Store(true)
	code, _ = get("/readyz")
	assert.Equal(t, http.StatusOK, code)
	code, _ = get("/healthz")
	assert.Equal(t, http.StatusOK, code)
	code, body := get("/metrics")
	assert.Equal(t, http.StatusOK, code)
	assert.True(t, strings.Contains(body, `workqueue_depth{name="summarize"} 1`), body)
}
