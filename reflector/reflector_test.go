package reflector

import (
	"fmt"
	"net"
	"os"
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
