package reflector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// State-machine tests: a real Reflector driven through its states by a
// scripted ListerWatcher and a fake clock. No network, no sleeping.

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestFirstListAtZeroThenWatchFromListRV(t *testing.T) {
	h := start(t, newScriptLW(), listOnly())

	l := h.lw.next(t, "list")
	assert.Equal(t, "0", l.opts.ResourceVersion, "first list may be served from the watch cache")
	assert.Equal(t, int64(500), l.opts.Limit)
	l.list(podList("10", "", pod("a", "5"), pod("b", "7")), nil)

	w := h.lw.next(t, "watch")
	assert.Equal(t, "10", w.opts.ResourceVersion)
	assert.True(t, w.opts.AllowWatchBookmarks)
	require.NotNil(t, w.opts.TimeoutSeconds)
	assert.GreaterOrEqual(t, *w.opts.TimeoutSeconds, int64(300))
	assert.Less(t, *w.opts.TimeoutSeconds, int64(600))
	assert.Nil(t, w.opts.SendInitialEvents)
	w.watch(fakeWatch(false, added(pod("c", "11")), modified(pod("a", "12")), deleted(pod("b", "13"))), nil)

	ops := h.store.waitOps(t, 4)
	assert.Equal(t, []string{"replace [ns/a ns/b]@10", "add ns/c@11", "update ns/a@12", "delete ns/b@13"}, ops)
	h.waitRV("13")

	s := h.r.Stats()
	assert.Equal(t, int64(1), s.Lists)
	assert.Equal(t, int64(1), s.ListRequests)
	assert.Equal(t, int64(0), s.Relists)
	assert.Equal(t, int64(1), s.Watches)
	assert.Equal(t, map[watch.EventType]int64{watch.Added: 1, watch.Modified: 1, watch.Deleted: 1, watch.Bookmark: 0, watch.Error: 0}, s.Events)
	assert.Equal(t, "13", s.LastSyncResourceVersion)
	assert.Empty(t, s.Errors)
}

func TestNormalCloseRewatchesFromLastRVWithoutRelist(t *testing.T) {
	h := start(t, newScriptLW(), listOnly())
	w := h.sync("10")
	fw1 := fakeWatch(false, added(pod("a", "11")))
	w.watch(fw1, nil)
	h.waitRV("11")
	h.clk.Advance(2 * time.Second) // longer than minWatchLife: a normal end
	fw1.Stop()

	w2 := h.lw.next(t, "watch")
	assert.Equal(t, "11", w2.opts.ResourceVersion)

	// A quiet watch that lasted its full timeout: closed, no events, but
	// not "short". Again a watch, at once, from the same RV.
	fw := watch.NewRaceFreeFake()
	w2.watch(fw, nil)
	h.clk.waitPending(t, 1) // the watchdog: the reflector is consuming
	h.clk.Advance(2 * time.Second)
	fw.Stop()
	w3 := h.lw.next(t, "watch")
	assert.Equal(t, "11", w3.opts.ResourceVersion)

	s := h.r.Stats()
	assert.Equal(t, int64(1), s.ListRequests, "no relist")
	assert.Equal(t, int64(0), s.Backoffs)
	assert.Empty(t, s.Errors)
}

// A watch that ends at once is short whatever it carried: a server that
// ends every watch after one event must not get a new watch at once,
// forever (issue 16, item 1).
func TestShortWatchWithEventsBacksOff(t *testing.T) {
	h := start(t, newScriptLW(), listOnly())
	h.sync("10").watch(fakeWatch(true, added(pod("a", "11"))), nil)

	e := h.waitErr(KindShortWatch)
	assert.ErrorIs(t, e, errShortWatch)
	h.waitState(StateBackingOff)
	h.lw.none(t)
	h.clk.fireNext(t)
	assert.Equal(t, "11", h.lw.next(t, "watch").opts.ResourceVersion, "resumes from the event's RV")
	assert.Equal(t, int64(1), h.r.Stats().Backoffs)
}

func TestShortWatchBacksOff(t *testing.T) {
	h := start(t, newScriptLW(), listOnly())
	h.sync("10").watch(fakeWatch(true), nil) // closed at once, no events

	e := h.waitErr(KindShortWatch)
	assert.ErrorIs(t, e, errShortWatch)
	h.waitState(StateBackingOff)
	h.clk.fireNext(t)
	assert.Equal(t, "10", h.lw.next(t, "watch").opts.ResourceVersion)
	assert.Equal(t, int64(1), h.r.Stats().ListRequests)
}

func TestWatchExpiredRelistsAtLastRVThenConsistent(t *testing.T) {
	h := start(t, newScriptLW(), listOnly())
	h.sync("10").watch(fakeWatch(false,
		added(pod("a", "11")),
		failed(&apierrors.NewResourceExpired("too old resource version: 11 (20)").ErrStatus)), nil)

	e := h.waitErr(KindExpired)
	assert.True(t, apierrors.IsResourceExpired(e), "the ERROR event is a typed apierror")
	h.waitState(StateBackingOff)
	h.clk.fireNext(t)

	// Like client-go: first relist "at least as fresh as" the last RV, unpaged
	// so that the watch cache can serve it.
	l := h.lw.next(t, "list")
	assert.Equal(t, "11", l.opts.ResourceVersion)
	assert.Equal(t, int64(0), l.opts.Limit)
	l.list(nil, apierrors.NewResourceExpired("gone"))

	// Refused: at once, a consistent read.
	l = h.lw.next(t, "list")
	assert.Equal(t, "", l.opts.ResourceVersion)
	assert.Equal(t, int64(500), l.opts.Limit)
	l.list(podList("20", "", pod("b", "19")), nil)

	assert.Equal(t, "20", h.lw.next(t, "watch").opts.ResourceVersion)
	ops := h.store.snapshot()
	assert.Equal(t, "replace [ns/b]@20", ops[len(ops)-1])
	s := h.r.Stats()
	assert.Equal(t, int64(1), s.Relists)
	assert.Equal(t, int64(2), s.Errors[KindExpired])
	assert.Equal(t, int64(1), s.Events[watch.Error])
}

func TestWatchOpenExpiredRelists(t *testing.T) {
	h := start(t, newScriptLW(), listOnly())
	h.sync("10").watch(nil, apierrors.NewGone("gone"))
	h.waitState(StateBackingOff)
	h.clk.fireNext(t)
	assert.Equal(t, "10", h.lw.next(t, "list").opts.ResourceVersion)
}

func tooLargeRV() error {
	err := apierrors.NewTimeoutError("Too large resource version", 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{
		Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version",
	}}
	return err
}

func TestTooLargeRVListRetriesConsistentAtOnce(t *testing.T) {
	h := start(t, newScriptLW(), listOnly())
	h.lw.next(t, "list").list(nil, tooLargeRV())
	l := h.lw.next(t, "list")
	assert.Equal(t, "", l.opts.ResourceVersion)
	// The consistent read fails the same way: now back off, and stay at "".
	l.list(nil, tooLargeRV())
	h.waitState(StateBackingOff)
	h.clk.fireNext(t)
	l = h.lw.next(t, "list")
	assert.Equal(t, "", l.opts.ResourceVersion)
	l.list(podList("30", ""), nil)
	assert.Equal(t, "30", h.lw.next(t, "watch").opts.ResourceVersion)
	assert.Equal(t, int64(2), h.r.Stats().Errors[KindTooLargeRV])
}

func TestPagedList(t *testing.T) {
	h := start(t, newScriptLW(), listOnly())
	l := h.lw.next(t, "list")
	assert.Equal(t, int64(500), l.opts.Limit)
	l.list(podList("10", "token-1", pod("a", "5")), nil)

	l = h.lw.next(t, "list")
	assert.Equal(t, "token-1", l.opts.Continue)
	assert.Equal(t, "", l.opts.ResourceVersion, "continue and resourceVersion are exclusive")
	l.list(podList("12", "", pod("b", "6")), nil)

	assert.Equal(t, "10", h.lw.next(t, "watch").opts.ResourceVersion, "the snapshot's RV is the first page's")
	assert.Equal(t, []string{"replace [ns/a ns/b]@10"}, h.store.snapshot())
	assert.Equal(t, int64(2), h.r.Stats().ListRequests)
	assert.True(t, h.r.m.paginatedBefore) // read after the step: Run's goroutine is blocked in Watch
}

// The unpaged retry after an expired continue token is a list like any
// other: refused with 410 at "0", it is followed at once by a consistent
// read, not by another unpaged retry.
func TestExpiredContinueThenExpiredRetryListsConsistent(t *testing.T) {
	h := start(t, newScriptLW(), listOnly())
	h.lw.next(t, "list").list(podList("10", "token-1", pod("a", "5")), nil)
	h.lw.next(t, "list").list(nil, apierrors.NewResourceExpired("continue token expired"))
	l := h.lw.next(t, "list")
	assert.Equal(t, metav1.ListOptions{ResourceVersion: "0"}, l.opts, "the unpaged retry")
	l.list(nil, apierrors.NewResourceExpired("too old"))

	l = h.lw.next(t, "list")
	assert.Equal(t, "", l.opts.ResourceVersion, "a consistent read")
	assert.Equal(t, int64(500), l.opts.Limit)
	l.list(podList("20", "", pod("a", "19")), nil)
	assert.Equal(t, "20", h.lw.next(t, "watch").opts.ResourceVersion)
	assert.Zero(t, h.r.Stats().Backoffs, "at once")
}

func TestExpiredContinueFallsBackToFullList(t *testing.T) {
	h := start(t, newScriptLW(), listOnly())
	h.lw.next(t, "list").list(podList("10", "token-1", pod("a", "5")), nil)
	h.lw.next(t, "list").list(nil, apierrors.NewResourceExpired("continue token expired"))

	// As client-go's pager: one unpaged list at the RV first asked for.
	l := h.lw.next(t, "list")
	assert.Equal(t, metav1.ListOptions{ResourceVersion: "0"}, l.opts)
	l.list(podList("15", "", pod("a", "14"), pod("c", "15")), nil)

	assert.Equal(t, "15", h.lw.next(t, "watch").opts.ResourceVersion)
	assert.Equal(t, []string{"replace [ns/a ns/c]@15"}, h.store.snapshot(), "pages from the expired snapshot are dropped")
	assert.Equal(t, int64(3), h.r.Stats().ListRequests)
}

func TestThrottledWatchHonoursRetryAfter(t *testing.T) {
	h := start(t, newScriptLW(), listOnly())
	h.sync("10").watch(nil, apierrors.NewTooManyRequests("slow down", 7))

	e := h.waitErr(KindThrottled)
	assert.True(t, apierrors.IsTooManyRequests(e))
	h.waitState(StateBackingOff)
	// The first backoff is at most 800ms; the server asked for 7s.
	assert.Equal(t, 7*time.Second, h.clk.fireNext(t))
	assert.Equal(t, "10", h.lw.next(t, "watch").opts.ResourceVersion, "re-watch, no relist")
	assert.Equal(t, 7*time.Second, h.r.Stats().LastBackoff)
}

func connRefused() error {
	return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
}

func TestConnectionRefusedBackoffSequenceAndReset(t *testing.T) {
	h := start(t, newScriptLW(), listOnly())
	w := h.sync("10")
	ceilings := []time.Duration{800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond,
		6400 * time.Millisecond, 12800 * time.Millisecond, 25600 * time.Millisecond, 30 * time.Second, 30 * time.Second}
	for i, ceiling := range ceilings {
		w.watch(nil, connRefused())
		h.waitState(StateBackingOff)
		d := h.clk.fireNext(t)
		assert.Greater(t, d, time.Duration(0), "retry %d", i)
		assert.LessOrEqual(t, d, ceiling, "retry %d: full jitter stays under the ceiling", i)
		w = h.lw.next(t, "watch")
		assert.Equal(t, "10", w.opts.ResourceVersion)
	}
	assert.Equal(t, int64(len(ceilings)), h.r.Stats().Errors[KindNetwork])

	// The server is back: the watch works for two minutes, then breaks.
	fw := watch.NewRaceFreeFake()
	w.watch(fw, nil)
	h.waitState(StateWatching)
	fw.Add(pod("a", "11"))
	h.store.waitOps(t, 2)
	h.clk.Advance(2 * time.Minute)
	fw.Stop()
	h.lw.next(t, "watch").watch(nil, connRefused())
	h.waitState(StateBackingOff)
	assert.LessOrEqual(t, h.clk.fireNext(t), 800*time.Millisecond, "backoff reset after two minutes of health")
	assert.Equal(t, "11", h.lw.next(t, "watch").opts.ResourceVersion)
	assert.Equal(t, int64(1), h.r.Stats().ListRequests, "never a relist")
}

// brokenWatch is a watch whose stream broke: it reports why through its
// Err method (streamError).
type brokenWatch struct {
	*watch.RaceFreeFakeWatcher
	err error
}

func (b brokenWatch) Err() error { return b.err }

func TestNoRelistStormAfterServerRestart(t *testing.T) {
	h := start(t, newScriptLW(), listOnly())
	fw := watch.NewRaceFreeFake()
	h.sync("10").watch(brokenWatch{fw, io.ErrUnexpectedEOF}, nil)
	fw.Add(pod("a", "11"))
	fw.Stop() // the server went away mid-stream

	h.waitErr(KindNetwork)
	h.waitState(StateBackingOff)
	h.clk.fireNext(t)
	h.lw.next(t, "watch").watch(nil, connRefused()) // still down
	h.waitState(StateBackingOff)
	h.clk.fireNext(t)
	h.lw.next(t, "watch").watch(nil, apierrors.NewServiceUnavailable("starting")) // coming up
	h.waitState(StateBackingOff)
	h.clk.fireNext(t)
	w := h.lw.next(t, "watch") // back: resume where we were
	assert.Equal(t, "11", w.opts.ResourceVersion)
	w.watch(fakeWatch(false, added(pod("b", "12"))), nil)
	h.store.waitOps(t, 3)

	s := h.r.Stats()
	assert.Equal(t, int64(1), s.ListRequests)
	assert.Equal(t, int64(0), s.Relists)
	assert.Equal(t, map[Kind]int64{KindNetwork: 2, KindServerError: 1}, s.Errors)
}

func TestBookmarkAdvancesRV(t *testing.T) {
	h := start(t, newScriptLW(), listOnly())
	fw := fakeWatch(false, marked(bookmark("50", false)))
	h.sync("10").watch(fw, nil)
	h.waitRV("50")
	h.clk.Advance(2 * time.Second) // not a short watch
	fw.Stop()
	assert.Equal(t, "50", h.lw.next(t, "watch").opts.ResourceVersion)
	assert.Equal(t, []string{"replace []@10", "bookmark@50"}, h.store.snapshot())
	assert.Equal(t, "50", h.r.LastSyncResourceVersion())
	assert.Equal(t, int64(1), h.r.Stats().Events[watch.Bookmark])
}

func TestErrorEventIsTypedAPIError(t *testing.T) {
	h := start(t, newScriptLW(), listOnly())
	status := &metav1.Status{Status: metav1.StatusFailure, Code: 500, Reason: metav1.StatusReasonInternalError, Message: "etcd hiccup"}
	h.sync("10").watch(fakeWatch(false, failed(status)), nil)

	e := h.waitErr(KindServerError)
	assert.Equal(t, opWatch, e.Op)
	assert.True(t, apierrors.IsInternalError(e))
	var se *apierrors.StatusError
	require.ErrorAs(t, e, &se)
	assert.Equal(t, "etcd hiccup", se.ErrStatus.Message)
	h.waitState(StateBackingOff)
	h.clk.fireNext(t)
	assert.Equal(t, "10", h.lw.next(t, "watch").opts.ResourceVersion, "a 5xx re-watches")
}

func TestWrongTypeAndNoMetadataSkippedAndReported(t *testing.T) {
	h := start(t, newScriptLW(), Options{WatchList: WatchListOff, ExpectedType: &corev1.Pod{}})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm", ResourceVersion: "8"}}
	mixed := &metav1.List{ListMeta: metav1.ListMeta{ResourceVersion: "10"},
		Items: []runtime.RawExtension{{Object: pod("a", "5")}, {Object: cm}}}
	h.lw.next(t, "list").list(mixed, nil)
	h.lw.next(t, "watch").watch(fakeWatch(false,
		added(cm), added(&metav1.Status{}), added(pod("b", "11"))), nil)

	assert.Equal(t, []string{"replace [ns/a]@10", "add ns/b@11"}, h.store.waitOps(t, 2))
	errs := h.errors()
	require.Len(t, errs, 3)
	for _, e := range errs {
		assert.Equal(t, KindWrongType, e.Kind)
		assert.ErrorIs(t, e, ErrWrongType)
	}
	assert.Equal(t, int64(3), h.r.Stats().Errors[KindWrongType])
	h.waitRV("11")
}

func TestNoMetadataSkippedWithoutExpectedType(t *testing.T) {
	h := start(t, newScriptLW(), listOnly())
	h.sync("10").watch(fakeWatch(false, added(&metav1.Status{}), added(pod("b", "11"))), nil)
	h.store.waitOps(t, 2)
	e := h.waitErr(KindWrongType)
	assert.ErrorIs(t, e, errNoMetadata)
}

func TestUnstructuredExpectedGVK(t *testing.T) {
	obj := func(kind string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind(kind)
		u.SetName("x")
		return u
	}
	tc := newTypeCheck(obj("Pod"))
	_, err := tc.admit(obj("Pod"))
	assert.NoError(t, err)
	_, err = tc.admit(obj("Secret"))
	assert.ErrorIs(t, err, ErrWrongType)
	assert.Equal(t, schema.GroupVersionKind{Version: "v1", Kind: "Pod"}.String(), typeName(obj("Pod")))
	assert.Equal(t, "*v1.Pod", typeName(&corev1.Pod{}))
}

func TestStoreErrorsAreReportedAndReplaceFailureRelists(t *testing.T) {
	h := start(t, newScriptLW(), listOnly())
	h.store.failNext("replace", errors.New("disk full"))
	h.lw.next(t, "list").list(podList("10", ""), nil)
	e := h.waitErr(KindStore)
	assert.Equal(t, opStore, e.Op)
	h.waitState(StateBackingOff)
	h.clk.fireNext(t)
	assert.Equal(t, "0", h.lw.next(t, "list").opts.ResourceVersion, "still the first list")
}

func TestResyncTimer(t *testing.T) {
	allow := make(chan bool, 10)
	h := start(t, newScriptLW(), Options{WatchList: WatchListOff, ResyncPeriod: 30 * time.Second,
		ShouldResync: func() bool { return <-allow }})
	h.sync("10").watch(watch.NewRaceFreeFake(), nil)
	h.waitState(StateWatching)

	allow <- false
	h.clk.waitPending(t, 2) // resync and watchdog
	h.clk.Advance(30 * time.Second)
	require.Eventually(t, func() bool { return len(allow) == 0 }, waitFor, time.Millisecond)
	assert.Equal(t, []string{"replace []@10"}, h.store.snapshot(), "ShouldResync said no")

	allow <- true
	h.clk.waitPending(t, 2) // re-armed
	h.clk.Advance(30 * time.Second)
	assert.Equal(t, "resync", h.store.waitOps(t, 2)[1])
	require.Eventually(t, func() bool { return h.r.Stats().Resyncs == 1 }, waitFor, time.Millisecond)
}

// A watch that always has the next event ready must not starve the resync
// tick: the reflector's fast path looks at its other channels every
// maxBurst events.
func TestResyncNotStarvedByABusyWatch(t *testing.T) {
	h := start(t, newScriptLW(), Options{WatchList: WatchListOff, ResyncPeriod: 30 * time.Second,
		ShouldResync: func() bool { return true }})
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	h.store.onAdd = func() { once.Do(func() { close(entered); <-release }) }
	const events = 4 * maxBurst
	fw := watch.NewFakeWithChanSize(events, false)
	h.sync("10").watch(fw, nil)
	h.waitState(StateWatching)
	h.clk.waitPending(t, 2) // resync and watchdog

	fw.Add(pod("p0", "11")) // the reflector stops inside the store
	<-entered
	for i := 1; i < events; i++ {
		fw.Add(pod(fmt.Sprintf("p%d", i), strconv.Itoa(11+i)))
	}
	h.clk.Advance(30 * time.Second) // the resync is due while events wait
	// The timer's function runs on a goroutine of its own: wait for it.
	require.Eventually(t, h.r.resyncDue.Load, waitFor, time.Millisecond)
	close(release)

	ops := h.store.waitOps(t, 1+events+1) // replace, the adds, the resync
	i := slices.Index(ops, "resync")
	require.GreaterOrEqual(t, i, 0, "no resync in %v", ops)
	assert.LessOrEqual(t, i, 1+1+maxBurst, "the resync waited for more than maxBurst events")
}

// tickQuiet advances the clock by one watchdog tick and waits until the
// reflector has counted it and started the next one.
func (h *harness) tickQuiet(t *testing.T, tick time.Duration) {
	t.Helper()
	h.clk.Advance(tick)
	h.clk.waitPending(t, 1)
}

func TestWatchdogRestartsSilentWatch(t *testing.T) {
	h := start(t, newScriptLW(), Options{WatchList: WatchListOff, BookmarkInterval: time.Minute, StuckWatchFactor: 3})
	fw := watch.NewRaceFreeFake()
	h.sync("10").watch(fw, nil)
	h.waitState(StateWatching)

	// The limit is 3m; the watchdog keeps time in ticks of a quarter of it.
	const tick = 45 * time.Second
	assert.Equal(t, []time.Duration{tick}, h.clk.waitPending(t, 1))
	h.tickQuiet(t, tick)
	h.tickQuiet(t, tick) // 1m30s of silence counted
	fw.Action(watch.Bookmark, bookmark("20", false))
	h.store.waitOps(t, 2)
	h.tickQuiet(t, tick) // this tick heard the bookmark: the count starts over
	h.tickQuiet(t, tick)
	h.tickQuiet(t, tick)
	h.tickQuiet(t, tick) // 2m15s counted: not yet
	h.lw.none(t)
	assert.Empty(t, h.errors())
	h.clk.Advance(tick) // 3m counted (3m45s after the bookmark, within a tick of the limit)

	e := h.waitErr(KindStuckWatch)
	assert.ErrorIs(t, e, errStuckWatch)
	assert.ErrorContains(t, e, "nothing for 3m0s")
	w := h.lw.next(t, "watch")
	assert.Equal(t, "20", w.opts.ResourceVersion, "restarted from the last RV, no backoff")
	assert.True(t, fw.IsStopped())
	assert.Equal(t, int64(0), h.r.Stats().Backoffs)
}

// Events the loop takes from its fast path count as activity. The store
// holds up the first event after each of the loop's pauses to serve its
// timers (every maxBurst events): a watchdog tick ends meanwhile, and the
// loop counts it at its next pause, after maxBurst more events, all taken
// from the fast path. Five such ticks in a row, more than the limit: had the
// fast path not been heard, the watch would have been restarted.
func TestWatchdogHearsTheFastPath(t *testing.T) {
	h := start(t, newScriptLW(), Options{WatchList: WatchListOff, BookmarkInterval: time.Minute, StuckWatchFactor: 3})
	const rounds = 5
	entered, release, gone := make(chan struct{}), make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(gone) }) // runs before the harness stops the reflector
	var adds int
	h.store.onAdd = func() {
		adds++ // the reflector's goroutine only
		if n := adds - (maxBurst + 2); n >= 0 && n%maxBurst == 0 && n/maxBurst < rounds {
			select {
			case entered <- struct{}{}:
				select {
				case <-release:
				case <-gone:
				}
			case <-gone:
			}
		}
	}
	total := 1 + maxBurst*(rounds+1)
	fw := watch.NewFakeWithChanSize(total, false)
	for i := range total { // all waiting before the watch starts
		fw.Add(pod("p", strconv.Itoa(11+i)))
	}
	h.sync("10").watch(fw, nil)
	const tick = 45 * time.Second // a quarter of the 3m limit
	for round := range rounds {
		select {
		case <-entered:
		case <-time.After(waitFor):
			t.Fatalf("round %d: the store was not reached; errors: %v", round, h.errors())
		}
		h.clk.waitPending(t, 1)
		select {
		case <-h.r.alarm: // rung by the last tick, which the loop served without waiting
		default:
		}
		h.clk.Advance(tick)
		require.Eventually(t, func() bool { return len(h.r.alarm) == 1 }, waitFor, time.Millisecond, "the tick rang")
		release <- struct{}{}
	}
	h.waitRV(strconv.Itoa(10 + total))
	h.lw.none(t)
	assert.Empty(t, h.errors())
}

// With the watchdog off, a running watch arms no timer. The state alone
// does not show the watch is being consumed (Watching is entered before
// the watch is opened, and the watchdog armed after): an applied event does.
func TestWatchdogDisabled(t *testing.T) {
	for _, tc := range []struct {
		factor float64
		timers int
	}{{-1, 0}, {0, 1}} { // 0: the default factor, so the harness is shown to see the watchdog
		t.Run(fmt.Sprint(tc.factor), func(t *testing.T) {
			h := start(t, newScriptLW(), Options{WatchList: WatchListOff, StuckWatchFactor: tc.factor})
			fw := watch.NewRaceFreeFake()
			h.sync("10").watch(fw, nil)
			fw.Add(pod("a", "11"))
			h.waitRV("11")
			assert.Len(t, h.clk.pending(), tc.timers)
		})
	}
}

func TestStatsTimeInStates(t *testing.T) {
	h := start(t, newScriptLW(), listOnly())
	l := h.lw.next(t, "list")
	h.clk.Advance(3 * time.Second) // the list takes 3s
	l.list(podList("10", ""), nil)
	h.lw.next(t, "watch").watch(nil, apierrors.NewTooManyRequests("slow down", 5))
	h.waitState(StateBackingOff)
	h.clk.fireNext(t)
	h.lw.next(t, "watch").watch(watch.NewRaceFreeFake(), nil)
	require.Eventually(t, func() bool { return h.r.Stats().Watches == 1 }, waitFor, time.Millisecond,
		"only the watch the server accepted counts")
	h.clk.Advance(time.Minute)

	s := h.r.Stats()
	assert.Equal(t, 3*time.Second, s.TimeIn[StateListing])
	assert.Equal(t, 5*time.Second, s.TimeIn[StateBackingOff])
	assert.Equal(t, time.Minute, s.TimeIn[StateWatching])
	assert.Zero(t, s.TimeIn[StateRelisting])
	assert.Equal(t, StateWatching, s.State)
	assert.Equal(t, int64(1), s.Backoffs)
	assert.Equal(t, 5*time.Second, s.LastBackoff)
	assert.Equal(t, map[Kind]int64{KindThrottled: 1}, s.Errors)
}

func TestBytesDecoded(t *testing.T) {
	lw := newScriptLW()
	lw.bytes = 4096
	r := New(lw, newRecStore(), Options{})
	assert.Equal(t, int64(4096), r.Stats().BytesDecoded)
	assert.Equal(t, StateIdle, r.State())
}

func TestRunTwiceAndMisconfigured(t *testing.T) {
	assert.ErrorIs(t, New(nil, newRecStore(), Options{}).Run(context.Background()), ErrNotConfigured)
	h := start(t, newScriptLW(), listOnly())
	h.lw.next(t, "list") // Run is in its first step, waiting for the answer
	assert.ErrorIs(t, h.r.Run(context.Background()), ErrAlreadyRunning)
}

func TestRunAgainResumesWithWatch(t *testing.T) {
	lw, store, clk := newScriptLW(), newRecStore(), newFakeClock()
	r := New(lw, store, Options{WatchList: WatchListOff, clock: clk})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	lw.next(t, "list").list(podList("10", ""), nil)
	lw.next(t, "watch").watch(fakeWatch(false, added(pod("a", "11"))), nil)
	store.waitOps(t, 2)
	cancel()
	require.NoError(t, <-done)

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	go func() { done <- r.Run(ctx) }()
	assert.Equal(t, "11", lw.next(t, "watch").opts.ResourceVersion)
	cancel()
	require.NoError(t, <-done)
}

func TestCancelDuringBackoffReturns(t *testing.T) {
	h := start(t, newScriptLW(), listOnly())
	h.lw.next(t, "list").list(nil, connRefused())
	h.waitState(StateBackingOff)
	// Cleanup cancels; Run must return without the timer firing.
}

func TestWatchFromZeroHoldsRVDuringSyntheticAdds(t *testing.T) {
	// A server that returns a list without resourceVersion: the watch
	// starts at "" and replays the state as ADDED events in any order.
	h := start(t, newScriptLW(), listOnly())
	w := h.sync("")
	assert.Equal(t, "", w.opts.ResourceVersion)
	fw := watch.NewRaceFreeFake()
	w.watch(fw, nil)
	fw.Add(pod("a", "9"))
	fw.Add(pod("b", "5"))
	h.store.waitOps(t, 3)
	assert.Equal(t, "", h.r.LastSyncResourceVersion(), "replayed ADDED events are not progress")
	fw.Modify(pod("a", "12"))
	h.waitRV("12") // a MODIFIED shows the replay is over
}

func TestUnknownEventTypeSkipped(t *testing.T) {
	h := start(t, newScriptLW(), listOnly())
	h.sync("10").watch(fakeWatch(false, watch.Event{Type: "WEIRD", Object: pod("x", "11")}, added(pod("a", "12"))), nil)
	assert.Equal(t, []string{"replace []@10", "add ns/a@12"}, h.store.waitOps(t, 2))
	e := h.waitErr(KindDecode)
	assert.ErrorIs(t, e, errUnknownEvent)
	h.waitRV("12")
}
