package reflector

import (
	"context"
	"fmt"
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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// State-machine tests that need the reflector's insides (its alarm, its
// timers) or a store that holds it up: a real Reflector driven by a
// scripted ListerWatcher and a fake clock. No network, no sleeping. The
// behaviour seen from outside is specified by the scripts in testdata/
// (script_test.go).

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func tooLargeRV() error {
	err := apierrors.NewTimeoutError("Too large resource version", 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{
		Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version",
	}}
	return err
}

func connRefused() error {
	return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
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
	assert.ErrorIs(t, e, ErrStuckWatch)
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
