package reflector

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/watch"
)

// Tests of a Reflector whose Run returns and is called again.

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
