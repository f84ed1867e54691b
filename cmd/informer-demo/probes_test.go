package main

import (
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func (p *pageClient) get(path string) (int, string) {
	resp, err := p.client.Get(p.url + path)
	require.NoError(p.t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(p.t, err)
	return resp.StatusCode, string(body)
}

// podEvents reads the pods informer's MODIFIED count from a /metrics body.
var podEvents = regexp.MustCompile(`(?m)^informer_watch_events_total\{informer="pods",type="MODIFIED"\} (\d+)$`)

// TestProbes: with -http the demo serves /healthz, /readyz once synced, and
// /metrics, whose figures follow the churn.
func TestProbes(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // registered first: runs after the demo's cleanup
	p := startDemoWithPage(t)
	code, _ := p.get("healthz")
	assert.Equal(t, http.StatusOK, code)
	code, _ = p.get("readyz")
	assert.Equal(t, http.StatusOK, code, "startDemoWithPage waited for the sync")

	events := func() int {
		code, body := p.get("metrics")
		require.Equal(t, http.StatusOK, code)
		assert.Contains(t, body, `informer_synced{informer="pods"} 1`)
		assert.Contains(t, body, `rest_client_requests_total{code="200",method="GET",host=`)
		m := podEvents.FindStringSubmatch(body)
		require.NotNil(t, m, body)
		n, err := strconv.Atoi(m[1])
		require.NoError(t, err)
		return n
	}
	first := events()
	require.Eventually(t, func() bool { return events() > first }, 30*time.Second, 50*time.Millisecond,
		"the churn's updates reach the figures")
}
