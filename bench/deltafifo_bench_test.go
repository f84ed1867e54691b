package bench

import (
	"context"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/seed31a95821/informer/deltafifo"
)

// The queue benchmarks. Each runs our deltafifo.Queue (impl=informer) and
// client-go v0.37.2's DeltaFIFO (impl=client-go) and RealFIFO
// (impl=client-go-realfifo) on the same pods, so that
//
//	go test -run xxx -bench Queue -benchmem -count 6 | benchstat -col /impl -
//
// prints the ratios. All queues key objects by namespace/name and have no
// transform. RealFIFO runs in its fastest mode (AtomicEvents and
// UnlockWhileProcessing) except where a benchmark needs KnownObjects, which
// that mode forbids.

// fifoPods returns n distinct pods.
func fifoPods(n int) []*corev1.Pod {
	out := make([]*corev1.Pod, n)
	for i := range out {
		out[i] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Namespace: fmt.Sprintf("ns-%d", i%10), Name: fmt.Sprintf("pod-%05d", i), ResourceVersion: "1",
		}}
	}
	return out
}

func newDeltaFIFO(known cache.KeyListerGetter) *cache.DeltaFIFO {
	return cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{
		KeyFunction: cache.MetaNamespaceKeyFunc, KnownObjects: known, EmitDeltaTypeReplaced: true,
	})
}

func newRealFIFO() *cache.RealFIFO {
	return cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{
		KeyFunction: cache.MetaNamespaceKeyFunc, AtomicEvents: true, UnlockWhileProcessing: true,
	})
}

func noopPop(any, bool) error { return nil }

// fillDrain runs b.N adds, draining all queued items each time `round`
// distinct keys have been added: one op is one add and (amortised) one pop.
func fillDrain(b *testing.B, pods []*corev1.Pod, add func(*corev1.Pod), drain func(n int)) {
	b.ReportAllocs()
	b.ResetTimer()
	queued := 0
	for i := 0; i < b.N; i++ {
		add(pods[i%len(pods)])
		if queued++; queued == len(pods) {
			drain(queued)
			queued = 0
		}
	}
	drain(queued)
}

// BenchmarkQueueAddPop: one op is one Add and one single-item Pop; the
// queue fills to 1000 distinct keys, then drains.
func BenchmarkQueueAddPop(b *testing.B) {
	pods := fifoPods(1000)
	b.Run("impl=informer", func(b *testing.B) {
		q := deltafifo.New(deltafifo.Options{})
		defer q.Close()
		ctx, noop := context.Background(), func(deltafifo.Batch) error { return nil }
		fillDrain(b, pods, func(p *corev1.Pod) { _ = q.Add(p) }, func(n int) {
			for range n {
				_ = q.Pop(ctx, noop)
			}
		})
	})
	b.Run("impl=client-go", func(b *testing.B) {
		f := newDeltaFIFO(nil)
		defer f.Close()
		fillDrain(b, pods, func(p *corev1.Pod) { _ = f.Add(p) }, func(n int) {
			for range n {
				_, _ = f.Pop(noopPop)
			}
		})
	})
	b.Run("impl=client-go-realfifo", func(b *testing.B) {
		f := newRealFIFO()
		defer f.Close()
		fillDrain(b, pods, func(p *corev1.Pod) { _ = f.Add(p) }, func(n int) {
			for range n {
				_, _ = f.Pop(noopPop)
			}
		})
	})
}

// BenchmarkQueueAddPopBatch is BenchmarkQueueAddPop draining in batches:
// ours with PopBatch(1000), RealFIFO with its PopBatch (1000 per batch).
// DeltaFIFO has no batch pop.
func BenchmarkQueueAddPopBatch(b *testing.B) {
	pods := fifoPods(1000)
	b.Run("impl=informer", func(b *testing.B) {
		q := deltafifo.New(deltafifo.Options{})
		defer q.Close()
		popped := 0
		count := func(bt deltafifo.Batch) error { popped += len(bt.Items); return nil }
		fillDrain(b, pods, func(p *corev1.Pod) { _ = q.Add(p) }, func(n int) {
			for popped = 0; popped < n; {
				_ = q.PopBatch(context.Background(), 1000, count)
			}
		})
	})
	b.Run("impl=client-go-realfifo", func(b *testing.B) {
		f := newRealFIFO()
		defer f.Close()
		popped := 0
		batch := func(ds []cache.Delta, _ bool) error { popped += len(ds); return nil }
		single := func(any, bool) error { popped++; return nil }
		fillDrain(b, pods, func(p *corev1.Pod) { _ = f.Add(p) }, func(n int) {
			for popped = 0; popped < n; {
				_ = f.PopBatch(batch, single)
			}
		})
	})
}

// BenchmarkQueueUpdateBacklog: the consumer is stalled while 100 keys
// receive b.N updates in all; then it drains. One op is one Update plus its
// share of the drain. B/op is what was allocated per event, garbage and
// backlog alike; what differs between the queues is how much of it stays
// alive while the consumer is stalled: one item per key for ours by
// default, every event for DeltaFIFO and for ours with KeepAllUpdates
// (impl=informer-keepall, the same semantics as DeltaFIFO's). client-go's
// figures move with b.N, as its per-key slices grow by doubling.
func BenchmarkQueueUpdateBacklog(b *testing.B) {
	pods := fifoPods(100)
	stalled := func(b *testing.B, update func(*corev1.Pod), drain func()) {
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			update(pods[i%len(pods)])
		}
		drain()
	}
	for _, keepAll := range []bool{false, true} {
		name := "impl=informer"
		if keepAll {
			name = "impl=informer-keepall"
		}
		b.Run(name, func(b *testing.B) {
			q := deltafifo.New(deltafifo.Options{KeepAllUpdates: keepAll})
			defer q.Close()
			stalled(b, func(p *corev1.Pod) { _ = q.Update(p) }, func() {
				for q.Stats().Depth > 0 {
					_ = q.PopBatch(context.Background(), 1000, func(deltafifo.Batch) error { return nil })
				}
			})
		})
	}
	b.Run("impl=client-go", func(b *testing.B) {
		f := newDeltaFIFO(nil)
		defer f.Close()
		stalled(b, func(p *corev1.Pod) { _ = f.Update(p) }, func() {
			for range min(b.N, len(pods)) {
				_, _ = f.Pop(noopPop)
			}
		})
	})
	b.Run("impl=client-go-realfifo", func(b *testing.B) {
		f := newRealFIFO()
		defer f.Close()
		stalled(b, func(p *corev1.Pod) { _ = f.Update(p) }, func() {
			popped := 0
			batch := func(ds []cache.Delta, _ bool) error { popped += len(ds); return nil }
			single := func(any, bool) error { popped++; return nil }
			for popped < b.N {
				_ = f.PopBatch(batch, single)
			}
		})
	})
}

// fifoKnown is a map-backed known-object store that satisfies both our
// KnownObjects and client-go's KeyListerGetter, so both queues compute
// tombstones against the very same data.
type fifoKnown map[string]runtime.Object

func (k fifoKnown) ListKeys() []string {
	keys := make([]string, 0, len(k))
	for key := range k {
		keys = append(keys, key)
	}
	return keys
}

func (k fifoKnown) Get(key string) (runtime.Object, bool) {
	o, ok := k[key]
	return o, ok
}

func (k fifoKnown) GetByKey(key string) (any, bool, error) {
	o, ok := k[key]
	return o, ok, nil
}

// BenchmarkQueueRelist: one op is a Replace of 10k pods against a consumer
// that holds 10k, half of which the list lacks (5k tombstones), followed by
// a full drain in batches where the queue has them. The consumer does not
// apply anything, so every op computes the same tombstones.
func BenchmarkQueueRelist(b *testing.B) {
	pods := fifoPods(15000)
	known := fifoKnown{}
	for _, p := range pods[:10000] {
		known[p.Namespace+"/"+p.Name] = p
	}
	list := make([]runtime.Object, 0, 10000)
	for _, p := range pods[5000:] {
		list = append(list, p)
	}
	const items = 15000 // 10k Replaced + 5k tombstones
	loop := func(b *testing.B, relist func()) {
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			relist()
		}
	}
	for _, atomic := range []bool{false, true} {
		name := "impl=informer"
		if atomic {
			name = "impl=informer-atomic"
		}
		b.Run(name, func(b *testing.B) {
			q := deltafifo.New(deltafifo.Options{KnownObjects: known, AtomicRelist: atomic})
			defer q.Close()
			loop(b, func() {
				_ = q.Replace(list, "5")
				for q.Stats().Depth > 0 {
					_ = q.PopBatch(context.Background(), 1000, func(deltafifo.Batch) error { return nil })
				}
			})
		})
	}
	b.Run("impl=client-go", func(b *testing.B) {
		f := newDeltaFIFO(known)
		defer f.Close()
		asAny := slices.Collect(func(yield func(any) bool) {
			for _, o := range list {
				yield(o)
			}
		})
		loop(b, func() {
			_ = f.Replace(asAny, "5")
			for range items {
				_, _ = f.Pop(noopPop)
			}
		})
	})
	b.Run("impl=client-go-realfifo", func(b *testing.B) {
		// KnownObjects rules out RealFIFO's atomic mode: this is its
		// per-item mode, which computes the same tombstones.
		f := cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{
			KeyFunction: cache.MetaNamespaceKeyFunc, KnownObjects: known,
		})
		defer f.Close()
		asAny := slices.Collect(func(yield func(any) bool) {
			for _, o := range list {
				yield(o)
			}
		})
		loop(b, func() {
			_ = f.Replace(asAny, "5")
			popped := 0
			batch := func(ds []cache.Delta, _ bool) error { popped += len(ds); return nil }
			single := func(any, bool) error { popped++; return nil }
			for popped < items {
				_ = f.PopBatch(batch, single)
			}
		})
	})
}
