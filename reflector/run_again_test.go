package reflector

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"
)

// Tests of a Reflector whose Run returns and is called again.

// A resourceVersion of "" or "0" is no position to resume from (see
// resumable): a watch from there replays the current state and never
// reports what was deleted meanwhile. A Run that starts after a snapshot
// at such a resourceVersion must relist, as a watch ending there does.
func TestRunAgainAfterSnapshotWithoutRVRelists(t *testing.T) {
	lw, store := newScriptLW(), newRecStore()
	r := New(lw, store, Options{WatchList: WatchListOff, clock: newFakeClock()})
	stop := runInBackground(t, r)
	lw.next(t, "list").list(podList("", "", pod("a", "5")), nil)
	lw.next(t, "watch").watch(watch.NewRaceFreeFake(), nil)
	store.waitOps(t, 1)
	stop()

	runAgainExpectingList(t, r, lw)
}

// runAgainExpectingList runs r again and checks that its first call is a
// list, which it answers.
func runAgainExpectingList(t *testing.T, r *Reflector, lw *scriptLW) {
	t.Helper()
	stop := runInBackground(t, r)
	defer stop()
	c := anyCall(t, lw)
	assert.Equal(t, "list", c.verb, "resumed with a %s from %q", c.verb, c.opts.ResourceVersion)
	c.list(podList("20", ""), nil)
}

// anyCall waits for the reflector's next call, of either verb.
func anyCall(t *testing.T, lw *scriptLW) *call {
	t.Helper()
	select {
	case c := <-lw.calls:
		return c
	case <-time.After(waitFor):
		t.Fatalf("no call within %v", waitFor)
		return nil
	}
}

// heldClock is a fakeClock whose AfterFunc functions, once due, wait until
// the test runs them: a time.AfterFunc whose goroutine the scheduler has not
// run yet. Its timer has fired, so Stop reports false, but its function is
// still to come.
type heldClock struct {
	*fakeClock
	held chan func()
}

func (c *heldClock) AfterFunc(d time.Duration, f func()) timer {
	return c.fakeClock.AfterFunc(d, func() { c.held <- f })
}

// A resync tick that fired as Run returned, its function running only
// after Run's cleanup, must not leave two resync timers running in the
// next Run (resyncs at twice the rate), one of them outliving it.
func TestLateResyncTickDoesNotDoubleTheResyncTimer(t *testing.T) {
	lw, store := newScriptLW(), newRecStore()
	clk := &heldClock{fakeClock: newFakeClock(), held: make(chan func(), 4)}
	r := New(lw, store, Options{WatchList: WatchListOff, clock: clk, ResyncPeriod: 30 * time.Second, StuckWatchFactor: -1})
	stop := runInBackground(t, r)
	lw.next(t, "list").list(podList("10", ""), nil)
	lw.next(t, "watch").watch(watch.NewRaceFreeFake(), nil)
	assert.Equal(t, []time.Duration{30 * time.Second}, clk.waitPending(t, 1), "the resync timer")
	clk.Advance(30 * time.Second)
	var late func()
	select {
	case late = <-clk.held:
	case <-time.After(waitFor):
		t.Fatal("the resync timer did not fire")
	}
	stop()
	late() // the tick's function runs after Run returned

	stop = runInBackground(t, r)
	w := lw.next(t, "watch")
	assert.Equal(t, "10", w.opts.ResourceVersion)
	w.watch(watch.NewRaceFreeFake(), nil)
	// The late tick is served once the watch runs (it came due, after all).
	assert.Equal(t, "resync", store.waitOps(t, 2)[1])
	stop()
	assert.Empty(t, clk.pending(), "a timer outlived Run")
}

// A Run stopped while it was on its way to a relist (here: backing off
// after the server said the watch's resourceVersion had expired) leaves the
// relist to the next Run. Resuming the watch instead would ask for the
// expired version again or, after a failed Replace, never repair the store.
func TestRunAgainKeepsAPlannedRelist(t *testing.T) {
	lw, store := newScriptLW(), newRecStore()
	clk := newFakeClock()
	r := New(lw, store, Options{WatchList: WatchListOff, clock: clk, StuckWatchFactor: -1})
	stop := runInBackground(t, r)
	lw.next(t, "list").list(podList("5", "", pod("a", "5")), nil)
	lw.next(t, "watch").watch(nil, apierrors.NewResourceExpired("too old resource version: 5 (9)"))
	clk.waitPending(t, 1) // the backoff before the relist
	stop()

	runAgainExpectingList(t, r, lw)
}
