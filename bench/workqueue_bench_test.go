package bench

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"

	ourqueue "github.com/seed31a95821/informer/workqueue"
)

// workQueue is what both queues offer a controller's workers, so one
// harness drives both.
type workQueue interface {
	Add(item string)
	Get() (item string, shutdown bool)
	Done(item string)
	ShutDown()
}

// workqueueImpls are the queues compared: ours, and client-go's
// TypedRateLimitingQueue as a controller builds it (NewTypedRateLimitingQueue
// with its default controller rate limiter).
var workqueueImpls = []struct {
	name string
	make func() workQueue
}{
	{"informer", func() workQueue { return ourqueue.New[string](ourqueue.Options[string]{}) }},
	{"client-go", func() workQueue {
		return workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	}},
}

// workqueueKeys are the items of BenchmarkWorkqueue: namespace/name keys,
// taken in turn. An item is handed out within a few ops of being added, so
// with a million keys an add is never deduplicated in practice: every add is
// processed.
var workqueueKeys = sync.OnceValue(func() []string {
	keys := make([]string, 1<<20)
	for i := range keys {
		keys[i] = fmt.Sprintf("ns-%d/pod-%d", i%10, i)
	}
	return keys
})

// BenchmarkWorkqueue: 1, 8 or 64 workers, each in a loop that adds a key,
// takes the next ready one and marks it done: one op is one Add, one Get
// and one Done, with as many goroutines contending for the queue as a
// controller has workers (each worker stands for a handler that enqueues as
// well). ns/op is wall time; cpu-ns/op is the CPU time of the whole process
// per op (all goroutines, the garbage collector included; see processCPU).
func BenchmarkWorkqueue(b *testing.B) {
	for _, workers := range []int{1, 8, 64} {
		for _, impl := range workqueueImpls {
			b.Run(fmt.Sprintf("workers=%d/impl=%s", workers, impl.name), func(b *testing.B) {
				benchmarkWorkqueue(b, impl.make(), workers)
			})
		}
	}
}

func benchmarkWorkqueue(b *testing.B, q workQueue, workers int) {
	keys := workqueueKeys()
	b.ReportAllocs()
	cpu0 := processCPU()
	b.ResetTimer()
	runWorkqueue(q, keys, workers, b.N)
	b.StopTimer()
	b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// runWorkqueue is BenchmarkWorkqueue's load: workers goroutines share n
// ops, each an Add of the next key, a Get and a Done; it returns when all
// are done and the queue is shut down.
func runWorkqueue(q workQueue, keys []string, workers, n int) {
	var working, adding sync.WaitGroup
	var next atomic.Int64
	adding.Add(n)
	for range workers {
		working.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				q.Add(keys[i%int64(len(keys))])
				adding.Done()
				item, shutdown := q.Get()
				if shutdown {
					return
				}
				q.Done(item)
			}
		})
	}
	// Should an add ever be deduplicated, one Get would have no item: shut
	// the queue down once every add is made, which releases it.
	adding.Wait()
	q.ShutDown()
	working.Wait()
}

// TestWorkqueueHarness runs BenchmarkWorkqueue's load on both queues, with
// 1, 8 and 64 workers, through a wrapper that checks what the benchmark
// relies on to call their figures the same work: every key added is handed
// out exactly once (no add is deduplicated away, none is lost), and no item
// is in two workers' hands at once.
func TestWorkqueueHarness(t *testing.T) {
	const n = 50_000
	keys := workqueueKeys()
	for _, workers := range []int{1, 8, 64} {
		for _, impl := range workqueueImpls {
			t.Run(fmt.Sprintf("workers=%d/impl=%s", workers, impl.name), func(t *testing.T) {
				c := &checkedQueue{workQueue: impl.make(), got: map[string]int{}, inHand: map[string]bool{}}
				runWorkqueue(c, keys, workers, n)
				c.mu.Lock()
				defer c.mu.Unlock()
				if c.fault != "" {
					t.Fatal(c.fault)
				}
				if len(c.got) != n {
					t.Fatalf("%d keys handed out, want %d", len(c.got), n)
				}
				for _, k := range keys[:n] {
					if c.got[k] != 1 {
						t.Fatalf("key %s handed out %d times, want once", k, c.got[k])
					}
				}
			})
		}
	}
}

// checkedQueue wraps a workQueue and records what Get hands out.
type checkedQueue struct {
	workQueue
	mu     sync.Mutex      // guards the fields below
	got    map[string]int  // times each item was handed out
	inHand map[string]bool // items between Get and Done
	fault  string          // the first broken rule seen
}

func (c *checkedQueue) Get() (string, bool) {
	item, shutdown := c.workQueue.Get()
	if shutdown {
		return item, shutdown
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inHand[item] && c.fault == "" {
		c.fault = fmt.Sprintf("%s handed to two workers at once", item)
	}
	c.inHand[item] = true
	c.got[item]++
	return item, false
}

func (c *checkedQueue) Done(item string) {
	c.mu.Lock()
	delete(c.inHand, item) // before Done: once it is Done, Get may hand it out again
	c.mu.Unlock()
	c.workQueue.Done(item)
}

// delayingQueue is what both queues offer for delayed adds.
type delayingQueue interface {
	workQueue
	AddAfter(item string, d time.Duration)
}

// BenchmarkWorkqueueAddAfter: 100,000 keys added with delays spread from one
// second to about an hour, none due during the benchmark: what a controller
// holds after a mass failure of its items. One op is the 100k adds. B/op is
// what was allocated (client-go's delaying loop included: it is waited for);
// live-B/item is the heap the waiting items keep, measured after a
// collection.
func BenchmarkWorkqueueAddAfter(b *testing.B) {
	const n = 100_000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("ns-%d/pod-%d", i%10, i)
	}
	impls := []struct {
		name string
		make func() delayingQueue
	}{
		{"informer", func() delayingQueue { return ourqueue.New[string](ourqueue.Options[string]{}) }},
		{"client-go", func() delayingQueue { return workqueue.NewTypedDelayingQueue[string]() }},
	}
	for _, impl := range impls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			reportLiveHeap(b, n, func() (shutDown func()) {
				q := impl.make()
				for i, k := range keys {
					q.AddAfter(k, time.Second+time.Duration(i%3600)*time.Second)
				}
				// A sentinel due at once goes through client-go's delaying
				// loop after every key above: getting it back proves they
				// are all in its heap.
				q.AddAfter("sentinel", time.Nanosecond)
				if item, _ := q.Get(); item != "sentinel" {
					b.Fatalf("got %q, want the sentinel", item)
				}
				return q.ShutDown
			})
		})
	}
}

// reportLiveHeap runs fill once per iteration, timed, between two garbage
// collections, and reports the heap fill left reachable per item as
// live-B/item. fill builds a queue of n items and returns its ShutDown,
// which holds the queue until the heap has been read.
func reportLiveHeap(b *testing.B, n int, fill func() (shutDown func())) {
	b.ReportAllocs()
	var live uint64
	for b.Loop() {
		b.StopTimer()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		b.StartTimer()
		shutDown := fill()
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&after)
		live += after.HeapAlloc - before.HeapAlloc
		shutDown()
		b.StartTimer()
	}
	b.ReportMetric(float64(live)/float64(b.N)/float64(n), "live-B/item")
}

// BenchmarkWorkqueueBacklog: 100,000 keys added and none taken yet, what a
// controller holds while its workers work through an informer's initial
// list. One op is the 100k adds. live-B/item is the heap the queue keeps
// for them, measured after a collection (the keys' own bytes are not
// counted: they exist before the adds).
func BenchmarkWorkqueueBacklog(b *testing.B) {
	const n = 100_000
	keys := workqueueKeys()[:n]
	for _, impl := range workqueueImpls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			reportLiveHeap(b, n, func() (shutDown func()) {
				q := impl.make()
				for _, k := range keys {
					q.Add(k)
				}
				return q.ShutDown
			})
		})
	}
}
