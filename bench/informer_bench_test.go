//go:build unix

package bench

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/seed31a95821/informer"
)

// The pipeline benchmarks: the whole informer, from the watch to the
// handlers, ours (impl=informer) beside client-go v0.37.2's
// SharedIndexInformer (impl=client-go), fed the same pre-built events by the
// in-memory replayLW (replay_test.go). One op is one watch event; every
// handler is told about every event. So
//
//	go test -run xxx -bench Pipeline -benchmem -count 5 | tee pipeline.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /impl pipeline.txt
//
// prints, for 1, 10 and 100 handlers, the wall-clock time (sec/op), CPU
// time (cpu-ns/op, see processCPU), bytes and allocations per event (the
// exact allocs/event beside allocs/op, which is rounded down) through
// reflector -> queue -> indexer -> processor -> handlers, and the ratio
// between the two implementations. A third column, impl=floor, is no
// informer: it is what the benchmark itself costs, plus one channel hop per
// handler (see floor_bench_test.go).
//
// The timer runs from the call to Run until the last handler has been told
// about the last event. Building the events, the informer and its handlers
// happens before; stopping it after. Both informers run with their
// defaults, except WatchList, which both are told not to use (see replayLW),
// and our handlers' backlog bound, which they turn off (KeepAllUpdates) to
// be told about every event, as client-go's handlers are.
// client-go keeps its default feature gates (RealFIFO, batch processing)
// and a namespace index, as its informer factories configure it; ours keeps
// its default namespace and label indexes.

// pipelineHandlerCounts are the handler counts the issue asks for.
var pipelineHandlerCounts = []int{1, 10, 100}

// pipelineTimeout bounds the wait for the handlers. It is far beyond any
// real run; reaching it means events were lost, and the benchmark fails
// with the counts instead of hanging.
const pipelineTimeout = 5 * time.Minute

// pipelineImpl is one informer implementation under test. build constructs
// an informer over lw with one counting handler per tally.handlers and
// returns its Run, which blocks until ctx is done and the informer stopped.
type pipelineImpl struct {
	name  string
	build func(lw *replayLW, tally *pipelineTally) (run func(ctx context.Context), cache func() []string, err error)
}

var pipelineImpls = []pipelineImpl{
	{name: "informer", build: buildOurPipeline},
	{name: "client-go", build: buildClientGoPipeline},
}

// buildOurPipeline builds our SharedInformer with typed handlers.
func buildOurPipeline(lw *replayLW, tally *pipelineTally) (func(context.Context), func() []string, error) {
	inf := informer.New[*corev1.Pod](lw, informer.Options{Name: "pods"})
	for i, hc := range tally.handlers {
		// Every handler must be told about every event, as client-go's
		// are: a handler the replay outruns by more than the backlog
		// limit would otherwise be told of fewer, merged.
		_, err := inf.AddEventHandler(informer.Handler[*corev1.Pod]{
			OnAdd:    func(*corev1.Pod, bool) { tally.saw(hc, &hc.adds) },
			OnUpdate: func(_, _ *corev1.Pod) { tally.saw(hc, &hc.updates) },
			OnDelete: func(*corev1.Pod, bool) { tally.saw(hc, &hc.deletes) },
		}, informer.HandlerOptions{Name: fmt.Sprintf("h%d", i), KeepAllUpdates: true})
		if err != nil {
			return nil, nil, err
		}
	}
	run := func(ctx context.Context) { _ = inf.Run(ctx) }
	keys := func() []string {
		var out []string
		for _, obj := range inf.Indexer().List() {
			pod := obj.(*corev1.Pod)
			out = append(out, pod.Namespace+"/"+pod.Name)
		}
		return out
	}
	return run, keys, nil
}

// buildClientGoPipeline builds client-go's SharedIndexInformer with no
// resync and a namespace index, as its informer factories do.
func buildClientGoPipeline(lw *replayLW, tally *pipelineTally) (func(context.Context), func() []string, error) {
	inf := cache.NewSharedIndexInformer(clientGoReplayLW{lw: lw}, &corev1.Pod{}, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, hc := range tally.handlers {
		_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { tally.saw(hc, &hc.adds) },
			UpdateFunc: func(_, _ any) { tally.saw(hc, &hc.updates) },
			DeleteFunc: func(any) { tally.saw(hc, &hc.deletes) },
		})
		if err != nil {
			return nil, nil, err
		}
	}
	return inf.RunWithContext, inf.GetStore().ListKeys, nil
}

// pipelineTally counts what every handler was told and closes done when the
// last handler has been told about the last event.
//
// Each handler has its own counters, on their own cache line, written only
// by that handler's goroutine: no contention between handlers, which would
// slow both implementations down alike and blur the comparison. The one
// shared counter, left, is touched once per handler per run. The counters
// are atomic so that the test can read them while the pipeline runs.
type pipelineTally struct {
	want     int64 // events each handler must be told about
	handlers []*pipelineHandlerCount
	left     atomic.Int64 // handlers not yet told about all events
	done     chan struct{}
}

type pipelineHandlerCount struct {
	seen, adds, updates, deletes atomic.Int64
	_                            [64 - 32]byte // own cache line
}

func newPipelineTally(handlers int, want int) *pipelineTally {
	t := &pipelineTally{want: int64(want), done: make(chan struct{})}
	for range handlers {
		t.handlers = append(t.handlers, &pipelineHandlerCount{})
	}
	t.left.Store(int64(handlers))
	return t
}

// saw records one call to handler hc, of the kind counted by kind.
func (t *pipelineTally) saw(hc *pipelineHandlerCount, kind *atomic.Int64) {
	kind.Add(1)
	if hc.seen.Add(1) == t.want && t.left.Add(-1) == 0 {
		close(t.done)
	}
}

// String describes how far each handler got, for failure messages.
func (t *pipelineTally) String() string {
	s := fmt.Sprintf("want %d events per handler; seen:", t.want)
	for _, hc := range t.handlers {
		s += fmt.Sprintf(" %d", hc.seen.Load())
	}
	return s
}

// pipelineRun is one run of the pipeline through n events.
type pipelineRun struct {
	lw    *replayLW
	tally *pipelineTally
	run   func(context.Context)
	keys  func() []string
}

func newPipelineRun(impl pipelineImpl, pool *replayPool, handlers, n int) (*pipelineRun, error) {
	r := &pipelineRun{lw: newReplayLW(pool, n), tally: newPipelineTally(handlers, n)}
	var err error
	r.run, r.keys, err = impl.build(r.lw, r.tally)
	return r, err
}

// start runs the informer on its own goroutine and returns the function
// that stops it and waits until it, and every watch stream, has ended.
func (r *pipelineRun) start() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { r.run(ctx) })
	return func() {
		cancel()
		wg.Wait()
		r.lw.wait()
	}
}

// await blocks until every handler has seen every event, or the timeout.
func (r *pipelineRun) await(timeout time.Duration) error {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-r.tally.done:
		return nil
	case <-timer.C:
		return fmt.Errorf("handlers not done after %v: %v", timeout, r.tally)
	}
}

func BenchmarkPipeline(b *testing.B) {
	pool := newReplayPool()
	for _, handlers := range pipelineHandlerCounts {
		for _, impl := range pipelineRunImpls {
			b.Run(fmt.Sprintf("handlers=%d/impl=%s", handlers, impl.name), func(b *testing.B) {
				benchmarkPipeline(b, impl, pool, handlers)
			})
		}
	}
}

// benchmarkPipeline pushes b.N events through one informer with the given
// number of handlers. ns/op, B/op and allocs/op are per event.
func benchmarkPipeline(b *testing.B, impl pipelineImpl, pool *replayPool, handlers int) {
	r, err := newPipelineRun(impl, pool, handlers, b.N)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var mem0, mem1 runtime.MemStats
	runtime.ReadMemStats(&mem0)
	cpu0 := processCPU()
	b.ResetTimer()
	stop := r.start()
	err = r.await(pipelineTimeout)
	b.StopTimer()
	cpu := processCPU() - cpu0
	runtime.ReadMemStats(&mem1)
	stop()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	// allocs/op is rounded down to a whole number; below one allocation per
	// event that says 0, so the exact figure is reported as well.
	b.ReportMetric(float64(mem1.Mallocs-mem0.Mallocs)/float64(b.N), "allocs/event")
}

// processCPU returns the CPU time (user and system, all threads) this process
// has used so far.
//
// ns/op is wall-clock time, which is not what the target is about:
// on a shared machine it counts time the informer spent waiting for a core,
// and an implementation that spreads work over more goroutines can finish
// sooner while burning more CPU. cpu-ns/op is the CPU cost of an event. It
// includes the garbage collector, and anything else the process does while
// the timer runs (nothing else, in a benchmark run on its own). This file is
// built on unix only because of this call.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestPipelineHarness runs the benchmark's harness once per implementation
// with a few events, proving what the benchmark relies on: each handler is
// told about every event exactly once, with the right kind; nothing is
// delivered twice; the cache ends up holding exactly the live pods; one
// list and one watch were made and WatchList was not used; and every
// goroutine of the informer and of the replayer ends when it is stopped.
// The floor (floor_bench_test.go), which keeps no cache, is held to all of
// it but the cache.
func TestPipelineHarness(t *testing.T) {
	pool := newReplayPool()
	// More than one pool cycle plus a part: wrap-around is exercised and
	// the cache is left non-empty.
	n := len(pool.events) + replayPoolSlots + 7
	wantAdds, wantUpdates, wantDeletes := pool.expectedKinds(n)
	wantKeys := pool.expectedKeys(n)
	if len(wantKeys) == 0 || wantAdds == 0 || wantUpdates == 0 || wantDeletes == 0 {
		t.Fatalf("fixture too small to test anything: %d keys, %d/%d/%d", len(wantKeys), wantAdds, wantUpdates, wantDeletes)
	}
	for _, impl := range pipelineRunImpls {
		t.Run("impl="+impl.name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			r, err := newPipelineRun(impl, pool, 3, n)
			if err != nil {
				t.Fatal(err)
			}
			stop := r.start()
			err = r.await(time.Minute)
			gotKeys := r.keys()
			stop()
			if err != nil {
				t.Fatal(err)
			}
			for i, hc := range r.tally.handlers {
				got := [3]int64{hc.adds.Load(), hc.updates.Load(), hc.deletes.Load()}
				if want := [3]int64{wantAdds, wantUpdates, wantDeletes}; got != want {
					t.Errorf("handler %d: adds/updates/deletes = %v, want %v", i, got, want)
				}
			}
			if impl.name != floorImpl.name { // the floor keeps no cache
				checkPipelineCache(t, gotKeys, wantKeys)
			}
			if l, w, wl := r.lw.lists.Load(), r.lw.watches.Load(), r.lw.watchLists.Load(); l != 1 || w != 1 || wl != 0 {
				t.Errorf("lists, watches, WatchList requests = %d, %d, %d; want 1, 1, 0", l, w, wl)
			}
		})
	}
}

// checkPipelineCache checks that a cache holds exactly the pods in want.
func checkPipelineCache(t *testing.T, got []string, want map[string]bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("cache holds %d pods, want %d", len(got), len(want))
	}
	for _, k := range got {
		if !want[k] {
			t.Errorf("cache holds %s, which the events deleted or never created", k)
		}
	}
}
