package informer_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/reflector"
	"github.com/seed31a95821/informer/rest"
)

// relistTour is the state the steps of docs/tour-relist.md share.
type relistTour struct {
	ctx     context.Context // the whole tour's: a step's own ends with the step
	cleanup func(func())    // the whole tour's t.Cleanup, for the same reason
	srv     *fakeapi.Server
	pods    *informer.SharedInformer[*corev1.Pod]
	log     *requestLog
	seen    *tourHandler
	news    tourSignal // notified by the log, the handler and OnError
}

// tourHandler writes down what the handler hears, in words a reader can
// follow.
type tourHandler struct {
	mu    sync.Mutex // guards lines
	lines []string
	news  tourSignal // notified after each line; nil for none
}

func (h *tourHandler) add(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lines = append(h.lines, fmt.Sprintf(format, args...))
	if h.news != nil {
		h.news.notify()
	}
}

// waitCount waits until n lines are waiting to be taken.
func (h *tourHandler) waitCount(t *testing.T, n int, msg string) {
	t.Helper()
	h.news.until(t, func() bool { return h.count() == n }, msg)
}

// take returns what was heard since the last take, sorted: the order among
// different keys is not part of the contract.
func (h *tourHandler) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.lines
	h.lines = nil
	slices.Sort(out)
	return out
}

func (h *tourHandler) count() int { h.mu.Lock(); defer h.mu.Unlock(); return len(h.lines) }

func (h *tourHandler) handler() informer.Handler[*corev1.Pod] {
	return informer.Handler[*corev1.Pod]{
		OnAdd: func(p *corev1.Pod, initial bool) {
			h.add("OnAdd(%s, inInitialList=%v) rv %s", p.Name, initial, p.ResourceVersion)
		},
		OnUpdate: func(old, p *corev1.Pod) {
			h.add("OnUpdate(%s) rv %s -> %s", p.Name, old.ResourceVersion, p.ResourceVersion)
		},
		OnDelete: func(p *corev1.Pod, unknown bool) {
			h.add("OnDelete(%s, finalStateUnknown=%v) last known rv %s", p.Name, unknown, p.ResourceVersion)
		},
	}
}

// TestRelistTour performs docs/tour-relist.md, section by section: a watch
// goes down, the server forgets the history it would resume from, and the
// informer relists, infers the deletion it missed, and tells the handler only
// what changed.
func TestRelistTour(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // first registered, so it runs after the tour's own cleanups
	tour := relistTour{ctx: t.Context(), cleanup: t.Cleanup, news: newTourSignal()}
	runTour(t, "docs/tour-relist.md", []tourStep{
		{"1. The informer is watching", tour.watching},
		{"2. The watch goes down", tour.watchDown},
		{"3. The world moves on, and the history is compacted", tour.worldMovesOn},
		{"4. The resume is refused: 410 Expired", tour.refused},
		{"5. The relist", tour.relist},
		{"6. Replace works out what was deleted", tour.replace},
		{"7. The handler hears only what changed", tour.handlerHears},
		{"8. Watching again, from the relist's resourceVersion", tour.watchingAgain},
	})
}

func (tour *relistTour) watching(t *testing.T) []string {
	srv, err := fakeapi.NewServer(fakeapi.Options{})
	require.NoError(t, err)
	tour.cleanup(srv.Close)
	tour.srv = srv
	for _, name := range []string{"web-1", "web-2", "web-3"} {
		_, err := srv.Create(pod("shop", name, nil))
		require.NoError(t, err)
	}
	opts := informer.FactoryOptions{Namespace: "shop"}
	// Errors are counted in Stats before OnError is called: the steps read
	// them there, woken by this.
	opts.Informer.OnError = func(error) { tour.news.notify() }
	opts.Informer.Reflector.Backoff = fastRetry
	opts, tour.log = recordingFactory(t, srv.URL(), opts, tour.news)
	factory := informer.NewFactory(rest.Config{Host: srv.URL()}, opts)
	tour.cleanup(factory.Shutdown)
	tour.pods, err = informer.For[*corev1.Pod](factory)
	require.NoError(t, err)
	tour.seen = &tourHandler{news: tour.news}
	reg, err := tour.pods.AddEventHandler(tour.seen.handler(), informer.HandlerOptions{Name: "tour"})
	require.NoError(t, err)
	factory.Start(tour.ctx)
	require.True(t, informer.WaitForCacheSync(tour.ctx, tour.pods, reg))
	// The reflector records the snapshot's RV once Replace has returned,
	// which may be just after the informer reported the sync. Nothing the
	// test can hear marks that moment (no request, no notification), so
	// this one wait is a condition with a deadline.
	require.Eventually(t, func() bool {
		return tour.pods.LastSyncResourceVersion() == "3" && tour.pods.Stats().State == reflector.StateWatching
	}, waitFor, time.Millisecond)
	out := append(tour.log.take(), tour.seen.take()...)
	return append(out, "state "+tour.pods.Stats().State.String()+", last RV "+tour.pods.LastSyncResourceVersion())
}

func (tour *relistTour) watchDown(t *testing.T) []string {
	// Every watch request fails from now on, and the open one ends.
	tour.srv.Faults().FailNext(fakeapi.Failure{Verb: "watch", Resource: "pods", Count: 1 << 20, Code: 503})
	tour.srv.DropWatches()
	return tour.log.waitThrough(t, "-> "+reflector.KindServerError.String(), "the resume must be tried, and fail")
}

func (tour *relistTour) worldMovesOn(t *testing.T) []string {
	require.NoError(t, tour.srv.Delete(pod("shop", "web-2", nil)))                      // RV 4
	_, err := tour.srv.Update(pod("shop", "web-3", map[string]string{"tier": "front"})) // RV 5
	require.NoError(t, err)
	_, err = tour.srv.Create(pod("shop", "web-4", nil)) // RV 6
	require.NoError(t, err)
	tour.srv.Compact() // history up to RV 6 is gone: a watch from 3 cannot be served
	require.Zero(t, tour.seen.count(), "the handler has heard nothing: the watch is down")
	return []string{fmt.Sprintf("server at RV %d; the informer still at RV %s", tour.srv.ResourceVersion(), tour.pods.LastSyncResourceVersion())}
}

func (tour *relistTour) refused(t *testing.T) []string {
	tour.srv.Faults().Reset() // the watch can get through again: it is answered 410
	out := tour.log.waitThrough(t, `watch rv="3" -> accepted`, "the resume from RV 3 must reach the server")
	tour.news.until(t, func() bool { return tour.pods.Stats().Errors[reflector.KindExpired] > 0 },
		"the resume from RV 3 must be refused with 410")
	return append(out, "errors of kind "+reflector.KindExpired.String()+": 1")
}

func (tour *relistTour) relist(t *testing.T) []string {
	// The relist is counted once its snapshot is stored, with no request
	// or notification after it: a condition with a deadline, as in step 1.
	require.Eventually(t, func() bool { return tour.pods.Stats().Relists == 1 }, waitFor, time.Millisecond, "one relist")
	return tour.log.take()
}

func (tour *relistTour) replace(t *testing.T) []string {
	// Replace queues the batch; the consumer applies it, perhaps after the
	// reflector has counted the relist, and tells the handler only once
	// the cache is written: its three notifications (step 7) mean the
	// batch is applied.
	tour.seen.waitCount(t, 3, "the relist is applied and told")
	_, cached := tour.pods.Indexer().Get("shop/web-2")
	require.False(t, cached, "web-2 is gone from the cache")
	require.Zero(t, tour.pods.QueueStats().Depth, "the queue is drained")
	keys := tour.pods.Indexer().ListKeys()
	slices.Sort(keys)
	return []string{fmt.Sprintf("cache %v at RV %s", keys, tour.pods.LastSyncResourceVersion())}
}

func (tour *relistTour) handlerHears(t *testing.T) []string {
	tour.seen.waitCount(t, 3, "three notifications")
	return tour.seen.take()
}

func (tour *relistTour) watchingAgain(t *testing.T) []string {
	_, err := tour.srv.Update(pod("shop", "web-1", map[string]string{"tier": "back"})) // RV 7
	require.NoError(t, err)
	tour.seen.waitCount(t, 1, "the update arrives")
	// The handler may hear the update before the reflector records its
	// resourceVersion as the last one synced: wait for that too.
	require.Eventually(t, func() bool { return tour.pods.LastSyncResourceVersion() == "7" },
		10*time.Second, time.Millisecond, "the reflector records RV 7")
	s := tour.pods.Stats()
	out := append(tour.seen.take(), tour.log.take()...)
	return append(out, fmt.Sprintf("state %s, last RV %s, relists %d", s.State, s.LastSyncResourceVersion, s.Relists))
}
