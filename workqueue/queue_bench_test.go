package workqueue_test

import (
	"strconv"
	"testing"

	"github.com/seed31a95821/informer/metrics"
	"github.com/seed31a95821/informer/workqueue"
)

// BenchmarkAddGetDone is the CPU a controller's queue spends per item: an
// add, a get and a done of one of 1,000 keys.
func BenchmarkAddGetDone(b *testing.B) {
	b.Run("plain", func(b *testing.B) { benchAddGetDone(b, workqueue.Options[string]{}) })
	b.Run("metrics", func(b *testing.B) {
		benchAddGetDone(b, workqueue.Options[string]{Name: "bench", Metrics: new(metrics.Registry)})
	})
}

func benchAddGetDone(b *testing.B, opts workqueue.Options[string]) {
	q := workqueue.New(opts)
	defer q.ShutDown()
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "default/pod-" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		q.Add(keys[i%len(keys)])
		k, _ := q.Get()
		q.Done(k)
	}
}
