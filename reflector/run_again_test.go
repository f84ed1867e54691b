package reflector

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/watch"
)

// Tests of a Reflector whose Run returns and is called again.

// A resync timer may fire as Run returns and its function (resyncFired,
// on a goroutine of its own) run only after Run's cleanup: a late tick.
// The next Run must serve it, and must not be left with two resync timers
// (resyncs at twice the rate), one of them outliving it.
//
// Which comes first, the late function or the cleanup, is up to the
// scheduler, so the test plays the late function itself, between two Runs.
// An outliving timer shows when it fires after its Run returned: its
// function sets the flag for the next Run, which then resyncs at once.
func TestLateResyncTickDoesNotDoubleTheResyncTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw, store := newBubbleLW(), &recStore{}
		r := New(lw, store, Options{ResyncPeriod: 30 * time.Second, Tunables: Tunables{WatchList: WatchListOff, StuckWatchFactor: -1},
			OnError: func(err error) { t.Errorf("OnError: %v", err) }})
		stop := runInBubble(t, r)
		lw.next(t, "list").list(podList("10", ""), nil)
		lw.next(t, "watch").watch(watch.NewRaceFreeFake(), nil)
		// The resync timer: a tick a period after Run started, not before.
		advance(30*time.Second - time.Nanosecond)
		assert.Equal(t, []string{"replace []@10"}, store.ops())
		advance(time.Nanosecond)
		assert.Equal(t, []string{"replace []@10", "resync"}, store.ops(), "the resync timer")
		stop()
		r.resyncFired() // a tick's function runs after Run returned

		stop = runInBubble(t, r)
		w := lw.next(t, "watch")
		assert.Equal(t, "10", w.opts.ResourceVersion)
		w.watch(watch.NewRaceFreeFake(), nil)
		// The late tick is served once the watch runs (it came due, after all).
		assert.Equal(t, []string{"replace []@10", "resync", "resync"}, store.ops())
		stop()

		// No timer outlived Run: time far past every period brings nothing,
		// and the next Run starts with no tick due...
		advance(time.Hour)
		lw.none(t)
		assert.Len(t, store.ops(), 3, "a store call after Run returned")
		stop = runInBubble(t, r)
		lw.next(t, "watch").watch(watch.NewRaceFreeFake(), nil)
		assert.Len(t, store.ops(), 3, "a tick due at the start of a Run: a timer outlived the last")
		// ...and resyncs once a period, not twice.
		for i := 4; i <= 5; i++ {
			advance(30*time.Second - time.Nanosecond)
			assert.Len(t, store.ops(), i-1)
			advance(time.Nanosecond)
			assert.Len(t, store.ops(), i)
			assert.Equal(t, "resync", store.ops()[i-1])
		}
		stop()
		advance(time.Hour)
		lw.none(t)
		assert.Len(t, store.ops(), 5, "a store call after Run returned")
	})
}
