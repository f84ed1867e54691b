package reflector

import (
	"sync/atomic"
	"time"
)

// clock is the reflector's only source of time.
//
// Every wait the reflector makes (a backoff delay, the resync period, the
// stuck-watch watchdog, the bounded wait for a WatchList bookmark) goes
// through a clock, never through package time directly. That is what lets the
// tests drive minutes of retries in microseconds with a fake clock, and prove
// figures such as "the backoff resets after two minutes" without sleeping.
// It is unexported, set only by this package's tests (Options.clock): a
// caller outside has the wall's time, and tests outside drive time with
// testing/synctest instead.
//
// Implementations must be safe for concurrent use.
type clock interface {
	// Now returns the current time.
	Now() time.Time
	// NewTimer returns a one-shot timer that delivers on its channel once d
	// has passed.
	NewTimer(d time.Duration) timer
	// AfterFunc returns a one-shot timer that calls f, on a goroutine of
	// its own, once d has passed, unless it is stopped first. Its C is nil.
	// The reflector uses it for the timers of its busiest loop, so that
	// they ring one alarm channel instead of each taking a place in the
	// loop's select (see Reflector.alarm).
	AfterFunc(d time.Duration, f func()) timer
}

// timer is a one-shot timer made by a clock, the subset of *time.Timer the
// reflector needs.
type timer interface {
	// C returns the channel on which the timer delivers the time it fired.
	C() <-chan time.Time
	// Stop prevents the timer from firing. It reports whether the call
	// stopped it (false when it had already fired or been stopped).
	Stop() bool
}

// wallClock is the clock of the wall: package time. Its zero value is ready
// to use and it is safe for concurrent use.
type wallClock struct{}

// Now returns time.Now().
func (wallClock) Now() time.Time { return time.Now() }

// NewTimer returns a timer backed by time.NewTimer.
func (wallClock) NewTimer(d time.Duration) timer { return realTimer{time.NewTimer(d)} }

// AfterFunc returns a timer backed by time.AfterFunc.
func (wallClock) AfterFunc(d time.Duration, f func()) timer { return realTimer{time.AfterFunc(d, f)} }

// realTimer adapts *time.Timer, whose channel is a field, to timer, whose
// channel is a method (so that fakes can implement it).
type realTimer struct{ t *time.Timer }

func (t realTimer) C() <-chan time.Time { return t.t.C }
func (t realTimer) Stop() bool          { return t.t.Stop() }

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
	clock clock
	limit time.Duration
	tick  time.Duration // the length of a full tick
	ring  func()        // called when a tick ends
	t     timer         // the tick in progress; nil when disabled
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
func newQuietAlarm(c clock, limit time.Duration, ring func()) *quietTimer {
	q := &quietTimer{clock: c, limit: limit, ring: ring}
	if limit > 0 {
		q.tick = max(limit/quietTicks, 1)
		q.arm()
	}
	return q
}

// arm starts the next tick: a full one, or what is left of the limit.
func (q *quietTimer) arm() {
	q.armed = min(q.tick, q.limit-q.quiet)
	q.t = q.clock.AfterFunc(q.armed, func() {
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
