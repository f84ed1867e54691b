package reflector

import (
	"sync/atomic"
	"time"
)

// quietTimer detects silence: it fires when nothing has happened for limit.
//
// The reflector uses it twice: the stuck-watch watchdog (a watch with
// bookmarks on must say something at least every bookmark interval) and the
// bounded wait for the WatchList bookmark (initial events must keep flowing).
//
// Hearing of activity must cost next to nothing, because the watchdog hears
// of every event of a busy watch: note only raises a flag, and never reads
// the clock. Time is kept by a tick instead, a timer of limit/quietTicks.
// When it fires it sets a flag (see due) and rings the reflector's alarm;
// the loop then calls expired, which counts the tick as silent unless
// activity was noted since the last one, and reports expiry after a whole
// limit of silent ticks in a row. A silence is thus reported at least limit,
// and at most limit plus one tick, after the last activity. The tick count
// errs on the side of silence that is too long, never too short: a tick the
// loop serves late has lasted longer than counted.
//
// A limit <= 0 disables it: it never fires.
//
// Not safe for concurrent use: it belongs to the loop that waits on it.
type quietTimer struct {
	limit time.Duration
	tick  time.Duration // the length of a full tick
	ring  func()        // called when a tick ends
	t     *time.Timer   // the tick in progress; nil when disabled
	armed time.Duration // the length of the tick in progress
	quiet time.Duration // silence counted so far: the silent ticks since activity was last heard
	heard bool          // activity was noted during the tick in progress
	fired atomic.Bool
}

// quietTicks is how many ticks make up a quietTimer's limit: the precision
// with which it measures silence, against the number of timers it runs.
const quietTicks = 4

// newQuietAlarm returns a quietTimer that calls ring at the end of every
// tick.
func newQuietAlarm(limit time.Duration, ring func()) *quietTimer {
	q := &quietTimer{limit: limit, ring: ring}
	if limit > 0 {
		q.tick = max(limit/quietTicks, 1)
		q.arm()
	}
	return q
}

// arm starts the next tick: a full one, or what is left of the limit.
func (q *quietTimer) arm() {
	q.armed = min(q.tick, q.limit-q.quiet)
	q.t = time.AfterFunc(q.armed, func() {
		q.fired.Store(true)
		q.ring()
	})
}

// due reports, once, that a tick has ended: the caller must then call
// expired.
func (q *quietTimer) due() bool { return q.fired.Load() && q.fired.Swap(false) }

// note records activity.
func (q *quietTimer) note() { q.heard = true }

// expired is called when due reported true. It counts the tick that ended,
// reports whether the silence has now lasted limit and, if not, starts the
// next tick.
func (q *quietTimer) expired() bool {
	if q.heard {
		q.heard, q.quiet = false, 0
	} else {
		q.quiet += q.armed
	}
	if q.quiet >= q.limit {
		return true
	}
	q.arm()
	return false
}

// silence returns how long nothing has happened, as far as the ticks tell:
// at least this long.
func (q *quietTimer) silence() time.Duration { return q.quiet }

// stop releases the timer.
func (q *quietTimer) stop() {
	if q.t != nil {
		q.t.Stop()
	}
}
