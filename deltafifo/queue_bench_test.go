package deltafifo

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func benchPods(n int) []*corev1.Pod {
	out := make([]*corev1.Pod, n)
	for i := range out {
		out[i] = pod(fmt.Sprintf("pod-%05d", i), "1")
	}
	return out
}

// BenchmarkAddPop: one op is one Add and one Pop; the queue fills to 1000
// distinct keys, then drains.
func BenchmarkAddPop(b *testing.B) {
	pods := benchPods(1000)
	q := New(Options{})
	ctx := context.Background()
	noop := func(Batch) error { return nil }
	b.ReportAllocs()
	b.ResetTimer()
	queued := 0
	for i := 0; i < b.N; i++ {
		_ = q.Add(pods[i%len(pods)])
		if queued++; queued == len(pods) {
			for ; queued > 0; queued-- {
				_ = q.Pop(ctx, noop)
			}
		}
	}
	for ; queued > 0; queued-- {
		_ = q.Pop(ctx, noop)
	}
}

// BenchmarkAddPopBatch is BenchmarkAddPop draining with PopBatch(100).
func BenchmarkAddPopBatch(b *testing.B) {
	pods := benchPods(1000)
	q := New(Options{})
	ctx := context.Background()
	popped := 0
	count := func(bt Batch) error { popped += len(bt.Items); return nil }
	b.ReportAllocs()
	b.ResetTimer()
	queued := 0
	for i := 0; i < b.N; i++ {
		_ = q.Add(pods[i%len(pods)])
		if queued++; queued == len(pods) || i == b.N-1 {
			for popped = 0; popped < queued; {
				_ = q.PopBatch(ctx, 100, count)
			}
			queued = 0
		}
	}
}

// BenchmarkUpdateBacklog: the consumer is stalled while 100 keys receive
// b.N updates in all, then it drains. With compaction the backlog stays at
// 100 items whatever b.N; without it, it holds every update.
func BenchmarkUpdateBacklog(b *testing.B) {
	for _, keepAll := range []bool{false, true} {
		b.Run(fmt.Sprintf("keepAllUpdates=%v", keepAll), func(b *testing.B) {
			pods := benchPods(100)
			q := New(Options{KeepAllUpdates: keepAll})
			for _, p := range pods {
				_ = q.Add(p)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_ = q.Update(pods[i%len(pods)])
			}
			b.ReportMetric(float64(q.Stats().Deltas)/float64(len(pods)), "deltas/key")
			for q.Stats().Depth > 0 {
				_ = q.Pop(context.Background(), func(Batch) error { return nil })
			}
		})
	}
}

// BenchmarkRelist: one op is a Replace of 10k objects, half of them new,
// against a consumer holding 10k (so 5k tombstones), then a full drain.
func BenchmarkRelist(b *testing.B) {
	for _, atomic := range []bool{false, true} {
		b.Run(fmt.Sprintf("atomic=%v", atomic), func(b *testing.B) {
			pods := benchPods(15000)
			known := newStore(pods[:10000]...)
			list := make([]runtime.Object, 0, 10000)
			for _, p := range pods[5000:] {
				list = append(list, p)
			}
			q := New(Options{KnownObjects: known, AtomicRelist: atomic})
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_ = q.Replace(list, "5")
				for q.queuedUnits() > 0 {
					_ = q.PopBatch(context.Background(), 1000, func(Batch) error { return nil })
				}
			}
		})
	}
}
