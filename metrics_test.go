package informer_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/metrics"
	"github.com/seed31a95821/informer/rest"
)

// figure returns the value of the series of family name whose label values
// are labels, or -1 when there is none (a histogram's count).
func figure(r *metrics.Registry, name string, labels ...string) float64 {
	for _, f := range r.Gather() {
		if f.Desc.Name != name {
			continue
		}
		for _, s := range f.Samples {
			if len(s.LabelValues) >= len(labels) && equalPrefix(s.LabelValues, labels) {
				if f.Desc.Kind == metrics.Histogram {
					return float64(s.Count)
				}
				return s.Value
			}
		}
	}
	return -1
}

func equalPrefix(values, prefix []string) bool {
	for i, p := range prefix {
		if values[i] != p {
			return false
		}
	}
	return true
}

// TestInformerMetricsMove: a factory given a Registry reports the
// informer's and the wire's figures, read at gather time, and they follow
// what the informer does; they leave the registry when it stops.
func TestInformerMetricsMove(t *testing.T) {
	srv := mustServe(pod("shop", "web-1", nil))
	defer srv.Close()
	var reg metrics.Registry
	factory := informer.NewFactory(rest.Config{Host: srv.URL()}, informer.FactoryOptions{
		Informer: informer.Options{Metrics: &reg},
	})
	pods, err := informer.For[*corev1.Pod](factory)
	require.NoError(t, err)
	_, err = pods.AddEventHandler(informer.Handler[*corev1.Pod]{}, informer.HandlerOptions{Name: "h"})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	factory.Start(ctx)
	require.True(t, factory.WaitForCacheSync(ctx)["pods"])

	assert.Equal(t, 1.0, figure(&reg, "informer_synced", "pods"))
	assert.Equal(t, 1.0, figure(&reg, "informer_lists_total", "pods"))
	assert.Positive(t, figure(&reg, "rest_client_requests_total", "200", "GET"))
	assert.Positive(t, figure(&reg, "rest_client_request_duration_seconds", "GET"))

	added := figure(&reg, "informer_watch_events_total", "pods", "ADDED") // a WatchList's initial events count too
	_, err = srv.Create(pod("shop", "web-2", nil))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		return figure(&reg, "informer_handler_delivered_total", "pods", "h") == 2
	}, 10*time.Second, 5*time.Millisecond, "the initial pod and the created one")
	assert.Equal(t, added+1, figure(&reg, "informer_watch_events_total", "pods", "ADDED"))
	assert.Equal(t, 0.0, figure(&reg, "informer_handler_pending", "pods", "h"))
	assert.Positive(t, figure(&reg, "informer_last_synced_resource_version", "pods"))

	factory.Shutdown()
	assert.Equal(t, -1.0, figure(&reg, "informer_synced", "pods"), "a stopped informer leaves the registry")
}
