package reflector

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// WatchList (KEP-3157) tests: the initial state streamed over a watch.

func TestWatchListSyncsOnBookmarkAndKeepsTheSameWatch(t *testing.T) {
	h := start(t, newScriptLW(), Options{})
	c := h.lw.next(t, "watch")
	require.NotNil(t, c.opts.SendInitialEvents)
	assert.True(t, *c.opts.SendInitialEvents)
	assert.Equal(t, metav1.ResourceVersionMatchNotOlderThan, c.opts.ResourceVersionMatch)
	assert.Equal(t, "", c.opts.ResourceVersion, "a consistent snapshot")
	assert.True(t, c.opts.AllowWatchBookmarks)
	require.NotNil(t, c.opts.TimeoutSeconds)

	fw := watch.NewRaceFreeFake()
	c.watch(fw, nil)
	fw.Add(pod("a", "5"))
	fw.Add(pod("b", "7"))
	fw.Action(watch.Bookmark, bookmark("8", false)) // progress, not the end
	h.lw.none(t)
	fw.Action(watch.Bookmark, bookmark("9", true))
	assert.Equal(t, []string{"replace [ns/a ns/b]@9"}, h.store.waitOps(t, 1))
	h.waitRV("9")

	fw.Add(pod("c", "10")) // the same stream carries on
	assert.Equal(t, "add ns/c@10", h.store.waitOps(t, 2)[1])
	h.waitRV("10")
	h.lw.none(t)

	s := h.r.Stats()
	assert.Equal(t, int64(1), s.WatchListSyncs)
	assert.Equal(t, int64(0), s.Lists)
	assert.Equal(t, int64(0), s.ListRequests)
	assert.Equal(t, int64(1), s.Watches)
	assert.Equal(t, int64(3), s.Events[watch.Added])
	assert.Equal(t, int64(2), s.Events[watch.Bookmark])

	// When that watch ends normally, the next one is a plain watch.
	h.clk.Advance(2 * time.Second) // not a short watch
	fw.Stop()
	w := h.lw.next(t, "watch")
	assert.Equal(t, "10", w.opts.ResourceVersion)
	assert.Nil(t, w.opts.SendInitialEvents)
}

func TestWatchListFoldsModifiedAndDeleted(t *testing.T) {
	h := start(t, newScriptLW(), Options{})
	h.lw.next(t, "watch").watch(fakeWatch(false,
		added(pod("a", "5")), added(pod("b", "6")), added(pod("c", "7")),
		modified(pod("a", "8")), deleted(pod("b", "9")), added(pod("d", "10")),
		marked(bookmark("11", true))), nil)
	assert.Equal(t, []string{"replace [ns/a ns/c ns/d]@11"}, h.store.waitOps(t, 1))
}

func TestWatchListTimeoutFallsBackToListAndStopsTrying(t *testing.T) {
	h := start(t, newScriptLW(), Options{WatchListTimeout: 10 * time.Second})
	fw := watch.NewRaceFreeFake() // a server that ignores sendInitialEvents
	h.lw.next(t, "watch").watch(fw, nil)
	// The idle wait keeps time in ticks of a quarter of its 10s; the
	// overall deadline is the other timer.
	for range 4 {
		h.clk.waitPending(t, 2)
		h.clk.Advance(10 * time.Second / 4)
	}

	e := h.waitErr(KindWatchListTimeout)
	assert.Equal(t, opWatchList, e.Op)
	l := h.lw.next(t, "list") // no backoff, no hang: list at once
	assert.Equal(t, "0", l.opts.ResourceVersion)
	assert.True(t, fw.IsStopped())
	l.list(podList("20", "", pod("a", "19")), nil)

	// A later relist does not try WatchList again (Auto mode).
	h.lw.next(t, "watch").watch(nil, apierrors.NewResourceExpired("old"))
	h.waitState(StateBackingOff)
	h.clk.fireNext(t)
	assert.Equal(t, "20", h.lw.next(t, "list").opts.ResourceVersion)
}

func TestWatchListIdleTimerRestartsOnEvents(t *testing.T) {
	h := start(t, newScriptLW(), Options{WatchListTimeout: 10 * time.Second})
	fw := watch.NewRaceFreeFake()
	h.lw.next(t, "watch").watch(fw, nil)
	h.clk.waitPending(t, 2)
	h.clk.Advance(6 * time.Second)
	fw.Add(pod("a", "5"))
	require.Eventually(t, func() bool { return h.r.Stats().Events[watch.Added] == 1 }, waitFor, time.Millisecond)
	h.clk.Advance(6 * time.Second) // 12s since the start, 6s since the event
	fw.Action(watch.Bookmark, bookmark("6", true))
	assert.Equal(t, []string{"replace [ns/a]@6"}, h.store.waitOps(t, 1))
	assert.Empty(t, h.errors())
}

func TestWatchListOverallDeadline(t *testing.T) {
	h := start(t, newScriptLW(), Options{WatchListTimeout: time.Hour, MinWatchTimeout: time.Minute})
	fw := watch.NewRaceFreeFake()
	c := h.lw.next(t, "watch")
	c.watch(fw, nil)
	h.clk.waitPending(t, 2)
	// Events keep coming, but never the bookmark: the watch's own timeout
	// bounds the wait even if the server does not enforce it.
	for i := 0; i < 4; i++ {
		h.clk.Advance(30 * time.Second)
		fw.Add(pod("a", "5"))
	}
	h.waitErr(KindWatchListTimeout)
	h.lw.next(t, "list")
	assert.LessOrEqual(t, time.Duration(*c.opts.TimeoutSeconds)*time.Second, 2*time.Minute)
}

func TestWatchListRejectedFallsBackAtOnce(t *testing.T) {
	h := start(t, newScriptLW(), Options{})
	h.lw.next(t, "watch").watch(nil, apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "", nil))
	h.waitErr(KindRejected)
	l := h.lw.next(t, "list")
	assert.Equal(t, "0", l.opts.ResourceVersion)
	l.list(podList("5", ""), nil)
	assert.Nil(t, h.lw.next(t, "watch").opts.SendInitialEvents, "a plain watch follows the list")
}

func TestWatchListErrorEventFallsBack(t *testing.T) {
	h := start(t, newScriptLW(), Options{WatchList: WatchListOn})
	fw := fakeWatch(false, added(pod("a", "5")), failed(&apierrors.NewBadRequest("nope").ErrStatus))
	h.lw.next(t, "watch").watch(fw, nil)
	h.lw.next(t, "list").list(podList("5", ""), nil)
	assert.True(t, fw.IsStopped())
	assert.Equal(t, []string{"replace []@5"}, h.store.waitOps(t, 1), "nothing of the failed stream is stored")
}

func TestWatchListThrottledBacksOffThenRetriesWatchList(t *testing.T) {
	h := start(t, newScriptLW(), Options{WatchList: WatchListOn})
	h.lw.next(t, "watch").watch(nil, apierrors.NewTooManyRequests("slow", 2))
	h.waitState(StateBackingOff)
	assert.Equal(t, 2*time.Second, h.clk.fireNext(t))
	c := h.lw.next(t, "watch")
	assert.NotNil(t, c.opts.SendInitialEvents)
}

func TestWatchListStreamClosedBeforeBookmark(t *testing.T) {
	h := start(t, newScriptLW(), Options{})
	h.lw.next(t, "watch").watch(fakeWatch(true, added(pod("a", "5"))), nil)
	e := h.waitErr(KindWatchListTimeout)
	assert.ErrorIs(t, e, errWatchListClosed)
	h.lw.next(t, "list")
}

func TestWatchListExpiredRelistsConsistent(t *testing.T) {
	h := start(t, newScriptLW(), Options{WatchList: WatchListOn})
	h.lw.next(t, "watch").watch(fakeWatch(false,
		marked(bookmark("9", true)),
		failed(&apierrors.NewResourceExpired("too old").ErrStatus)), nil)
	h.waitState(StateBackingOff)
	h.clk.fireNext(t)

	// The relist streams again, from the last RV...
	c := h.lw.next(t, "watch")
	require.NotNil(t, c.opts.SendInitialEvents)
	assert.Equal(t, "9", c.opts.ResourceVersion)
	c.watch(nil, apierrors.NewResourceExpired("too old"))
	// ...which the server refuses: list at once, a consistent read.
	assert.Equal(t, "", h.lw.next(t, "list").opts.ResourceVersion)
}

func TestListerWatcherWithoutWatchListIsListed(t *testing.T) {
	lw := newScriptLW()
	lw.noWatchList = true
	h := start(t, lw, Options{})
	assert.Equal(t, "0", h.lw.next(t, "list").opts.ResourceVersion)
}

func TestWatchListSkipsWrongTypeAndUnknownEvents(t *testing.T) {
	h := start(t, newScriptLW(), Options{ExpectedType: &corev1.Pod{}})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", ResourceVersion: "3"}}
	h.lw.next(t, "watch").watch(fakeWatch(false,
		added(cm), watch.Event{Type: "WEIRD", Object: pod("x", "4")}, added(pod("a", "5")),
		marked(bookmark("6", true))), nil)
	assert.Equal(t, []string{"replace [ns/a]@6"}, h.store.waitOps(t, 1))
	assert.ErrorIs(t, h.waitErr(KindWrongType), ErrWrongType)
	assert.ErrorIs(t, h.waitErr(KindDecode), errUnknownEvent)
}

func TestWatchListBrokenStreamBacksOff(t *testing.T) {
	h := start(t, newScriptLW(), Options{})
	fw := watch.NewRaceFreeFake()
	h.lw.next(t, "watch").watch(brokenWatch{fw, io.ErrUnexpectedEOF}, nil)
	fw.Add(pod("a", "5"))
	fw.Stop()
	assert.ErrorIs(t, h.waitErr(KindNetwork), io.ErrUnexpectedEOF)
	h.waitState(StateBackingOff)
	h.clk.fireNext(t)
	c := h.lw.next(t, "watch")
	assert.NotNil(t, c.opts.SendInitialEvents, "a passing failure: WatchList is tried again")
}

func TestCancelRightAfterWatchListSyncStopsTheWatch(t *testing.T) {
	lw, store := newScriptLW(), newRecStore()
	ctx, cancel := context.WithCancel(context.Background())
	store.onReplace = cancel
	r := New(lw, store, Options{clock: newFakeClock()})
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	fw := fakeWatch(false, marked(bookmark("6", true)))
	lw.next(t, "watch").watch(fw, nil)
	require.NoError(t, <-done)
	assert.True(t, fw.IsStopped(), "the watch handed over by WatchList is not leaked")
}
