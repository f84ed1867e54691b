package workqueue_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed31a95821/informer/metrics"
	"github.com/seed31a95821/informer/workqueue"
)

// figures gathers r into name -> the value of the series labelled
// name="q": a counter's or gauge's value, a histogram's sum.
func figures(t *testing.T, r *metrics.Registry) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, f := range r.Gather() {
		for _, s := range f.Samples {
			require.Equal(t, []string{"q"}, s.LabelValues, f.Desc.Name)
			if f.Desc.Kind == metrics.Histogram {
				out[f.Desc.Name+"_count"] = float64(s.Count)
				out[f.Desc.Name+"_sum"] = s.Sum
				continue
			}
			out[f.Desc.Name] = s.Value
		}
	}
	return out
}

// TestMetricsTimeEachItem: in fake time, the histograms see exactly how
// long an item waited and how long its work took, and the gauges read the
// queue's Stats.
func TestMetricsTimeEachItem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var r metrics.Registry
		q := workqueue.New(workqueue.Options[string]{Name: "q", Metrics: &r})
		q.Add("a")
		q.Add("a") // already waiting: it keeps its first time
		q.Add("b")
		time.Sleep(2 * time.Second)
		item, _ := q.Get()
		require.Equal(t, "a", item)
		time.Sleep(3 * time.Second)
		q.AddRateLimited("c")

		got := figures(t, &r)
		assert.Equal(t, 1.0, got["workqueue_depth"], "b waits")
		assert.Equal(t, 2.0, got["workqueue_adds_total"])
		assert.Equal(t, 1.0, got["workqueue_retries_total"])
		assert.Equal(t, 1.0, got["workqueue_queue_duration_seconds_count"])
		assert.Equal(t, 2.0, got["workqueue_queue_duration_seconds_sum"])
		assert.Equal(t, 0.0, got["workqueue_work_duration_seconds_count"], "a is still in hand")

		q.Done("a")
		got = figures(t, &r)
		assert.Equal(t, 1.0, got["workqueue_work_duration_seconds_count"])
		assert.Equal(t, 3.0, got["workqueue_work_duration_seconds_sum"])

		q.ShutDown()
		got = figures(t, &r)
		assert.NotContains(t, got, "workqueue_depth", "a stopped queue leaves the registry")
		assert.Contains(t, got, "workqueue_work_duration_seconds_count", "its histograms stay: they are the registry's")
	})
}
