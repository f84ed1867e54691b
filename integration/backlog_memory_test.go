package integration

import (
	"context"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/processor"
	"github.com/seed31a95821/informer/reflector"
)

// floodBound is the most the live heap may grow during a flood of updates
// to a slow handler, with the informer's default options. What is allowed
// for: the handler's journal part (DefaultBacklogLimit plus a page of
// notifications, each pinning one version of the pod, about 3 KiB with its
// 2 KiB annotation: 3.5 MiB), the queue, the cache, the watch's buffers
// and what the race detector adds. Without the bound (KeepAllUpdates) the 20,000 versions the
// stuck handler has not read take 60 MiB and more: the contrast below shows
// the test can fail.
const floodBound = 16 << 20

// floodUpdates is the number of updates in the stuck-handler floods: the
// figure of the scenario that first showed the unbounded backlog. The flood
// to one pod is five times longer, to show that the bound holds over time.
const floodUpdates = 20_000

// heapSampler samples the live heap (after a forced collection, so that
// garbage not yet collected does not count) until stopped, keeping the
// peak.
type heapSampler struct {
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex // guards peak
	peak uint64
}

// liveHeap forces a collection and reads the bytes of live heap objects.
func liveHeap() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func sampleHeap(every time.Duration) *heapSampler {
	h := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			h.observe()
			select {
			case <-h.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return h
}

func (h *heapSampler) observe() {
	v := liveHeap()
	h.mu.Lock()
	h.peak = max(h.peak, v)
	h.mu.Unlock()
}

// finish stops the sampler after one last sample and returns the peak.
func (h *heapSampler) finish() uint64 {
	close(h.stop)
	<-h.done
	h.observe()
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.peak
}

// flood is one scenario: an informer whose one handler is slow (or stuck),
// and floodUpdates updates of the given pods, written as fast as the server
// takes them.
type flood struct {
	pods    int
	updates int
	handle  func(release <-chan struct{}) // the handler's work per notification
	keepAll bool                          // informer.Options.KeepAllUpdates
}

// run performs the flood and returns the live heap's growth and the
// handler's stats at the end of it.
func (f flood) run(t *testing.T) (growth uint64, st processor.HandlerStats) {
	t.Helper()
	release := make(chan struct{})
	lw := &floodLW{pods: f.pods, updates: f.updates}
	opts := quickInformer()
	opts.WatchList = reflector.WatchListOff
	opts.StuckWatchFactor = -1 // the flood ends in silence, which is not a stuck watch
	inf := informer.New[*corev1.Pod](lw, informer.Options{Name: "pods", Reflector: opts, KeepAllUpdates: f.keepAll,
		OnError: func(err error) { t.Errorf("informer error: %v", err) }})
	reg, err := inf.AddEventHandler(informer.Handler[*corev1.Pod]{
		OnUpdate: func(_, _ *corev1.Pod) { f.handle(release) },
	}, informer.HandlerOptions{})
	require.NoError(t, err)

	base := liveHeap()
	sampler := sampleHeap(100 * time.Millisecond)
	start := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = inf.Run(ctx) })
	defer func() {
		cancel()
		close(release) // a stuck handler lets go, so that Run can return
		wg.Wait()
	}()
	last := strconv.Itoa(f.updates + 1)
	require.True(t, waitUntil(converged, func() bool { return inf.LastSyncResourceVersion() == last }),
		"the informer never reached the last event")
	peak := sampler.finish()
	st = reg.Stats()
	t.Logf("%d updates to %d pods in %v: live heap %.1f MiB before, peak %.1f MiB (+%.1f MiB); handler %+v",
		f.updates, f.pods, time.Since(start).Round(time.Millisecond), mib(base), mib(peak), mib(peak-min(base, peak)), st)
	return peak - min(base, peak), st
}

// floodLW is a ListerWatcher that lists pods flood-0 to flood-(pods-1) at
// resourceVersion 1, then watches the given number of updates of them, round robin,
// as fast as the informer reads them: the events a busy server sends, each
// a new version with its own 2 KiB annotation, as a decoder makes them. It
// is in memory so that the heap the test measures is the informer's, not a
// server's history. Later watches stay silent.
type floodLW struct {
	pods    int
	updates int
	watches int // guarded by mu
	mu      sync.Mutex
}

func (lw *floodLW) pod(i, rv int) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "flood-" + strconv.Itoa(i),
		ResourceVersion: strconv.Itoa(rv),
		Annotations:     map[string]string{"payload": strings.Repeat("x", 2048)}}}
}

func (lw *floodLW) List(context.Context, metav1.ListOptions) (kruntime.Object, error) {
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	for i := range lw.pods {
		list.Items = append(list.Items, *lw.pod(i, 1))
	}
	return list, nil
}

func (lw *floodLW) Watch(ctx context.Context, _ metav1.ListOptions) (watch.Interface, error) {
	lw.mu.Lock()
	lw.watches++
	first := lw.watches == 1
	lw.mu.Unlock()
	ch := make(chan watch.Event)
	w := watch.NewProxyWatcher(ch)
	go func() {
		defer close(ch)
		for i := 0; first && i < lw.updates; i++ {
			select {
			case ch <- watch.Event{Type: watch.Modified, Object: lw.pod(i%lw.pods, i+2)}:
			case <-w.StopChan():
				return
			case <-ctx.Done():
				return
			}
		}
		select {
		case <-w.StopChan():
		case <-ctx.Done():
		}
	}()
	return w, nil
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// A flood of updates to slow handlers costs memory by keys, not by events,
// with the default options: the two scenarios that showed the unbounded
// backlog (a 5 ms handler under a flood to one pod; a stuck handler and
// 20,000 updates to 5 pods; docs/perf-log.md has what they cost then) stay
// under floodBound.
func TestSlowHandlerFloodStaysUnderMemoryBound(t *testing.T) {
	defer goleak.VerifyNone(t)
	slow := func(<-chan struct{}) { time.Sleep(5 * time.Millisecond) }
	stuck := func(release <-chan struct{}) { <-release }
	maxPending := processor.DefaultBacklogLimit + 128 // the limit is checked once a journal page

	t.Run("5ms handler, one pod", func(t *testing.T) {
		growth, st := flood{pods: 1, updates: 5 * floodUpdates, handle: slow}.run(t)
		require.LessOrEqual(t, st.Pending, maxPending+1, "%+v", st)
		require.Positive(t, st.Coalesced)
		require.LessOrEqual(t, growth, uint64(floodBound), "live heap grew %.1f MiB", mib(growth))
	})
	t.Run("stuck handler, 5 pods", func(t *testing.T) {
		growth, st := flood{pods: 5, updates: floodUpdates, handle: stuck}.run(t)
		require.True(t, st.Coalescing)
		require.LessOrEqual(t, st.Pending, maxPending+5, "%+v", st)
		require.Positive(t, st.Coalesced)
		require.LessOrEqual(t, growth, uint64(floodBound), "live heap grew %.1f MiB", mib(growth))
	})
	// The same stuck handler with the bound turned off, by the informer's
	// KeepAllUpdates, which implies the handler's: the test above would
	// fail without the bound.
	t.Run("stuck handler, 5 pods, KeepAllUpdates", func(t *testing.T) {
		if testing.Short() {
			t.Skip("the contrast, not the guarantee")
		}
		growth, st := flood{pods: 5, updates: floodUpdates, handle: stuck, keepAll: true}.run(t)
		require.GreaterOrEqual(t, st.Pending, floodUpdates, "every update (and the adds behind it): %+v", st)
		require.Zero(t, st.Coalesced)
		require.Greater(t, growth, uint64(floodBound), "without the bound the backlog holds every version")
	})
}
