package reflector

import (
	"sync/atomic"
	"time"
)

// Clock is the reflector's only source of time.
//
// Every wait the reflector makes (a backoff delay, the resync period, the
// stuck-watch watchdog, the bounded wait for a WatchList bookmark) goes
// through a Clock, never through package time directly. That is what lets the
// tests drive minutes of retries in microseconds with a fake clock, and prove
// figures such as "the backoff resets after two minutes" without sleeping.
//
// Implementations must be safe for concurrent use.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// NewTimer returns a one-shot timer that delivers on its channel once d
	// has passed.
	NewTimer(d time.Duration) Timer
	// AfterFunc returns a one-shot timer that calls f, on a goroutine of
	// its own, once d has passed, unless it is stopped first. Its C is nil.
	// The reflector uses it for the timers of its busiest loop, so that
	// they ring one alarm channel instead of each taking a place in the
	// loop's select (see Reflector.alarm).
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a one-shot timer made by a Clock, the subset of *time.Timer the
// reflector needs.
type Timer interface {
	// C returns the channel on which the timer delivers the time it fired.
	C() <-chan time.Time
	// Stop prevents the timer from firing. It reports whether the call
	// stopped it (false when it had already fired or been stopped).
	Stop() bool
}

// RealClock is the Clock of the wall: package time. Its zero value is ready
// to use and it is safe for concurrent use.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// NewTimer returns a Timer backed by time.NewTimer.
func (RealClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

// AfterFunc returns a Timer backed by time.AfterFunc.
func (RealClock) AfterFunc(d time.Duration, f func()) Timer { return realTimer{time.AfterFunc(d, f)} }

// realTimer adapts *time.Timer, whose channel is a field, to Timer, whose
// channel is a method (so that fakes can implement it).
type realTimer struct{ t *time.Timer }

func (t realTimer) C() <-chan time.Time { return t.t.C }
func (t realTimer) Stop() bool          { return t.t.Stop() }

// quietTimer fires when nothing has happened for limit: it detects silence.
//
// The reflector uses it twice: the stuck-watch watchdog (a watch with
// bookmarks on must say something at least every bookmark interval) and the
// bounded wait for the WatchList bookmark (initial events must keep flowing).
//
// Noting activity only records the time; the underlying timer is not reset
// on every event, which would cost a timer per event on a busy watch. When
// the timer fires, it sets a flag (see due) and rings the reflector's alarm;
// the loop then calls expired, which checks whether the silence was real
// and, if not, re-arms for the remainder. A limit <= 0 disables it: it
// never fires.
//
// Not safe for concurrent use: it belongs to the loop that waits on it.
type quietTimer struct {
	clock Clock
	limit time.Duration
	ring  func()        // called when the timer fires
	base  time.Time     // when the timer was made
	last  time.Duration // when activity was last noted, as time since base
	t     Timer         // nil when disabled
	fired atomic.Bool
}

// newQuietAlarm returns a quietTimer that calls ring when it fires.
func newQuietAlarm(c Clock, limit time.Duration, ring func()) *quietTimer {
	q := &quietTimer{clock: c, limit: limit, ring: ring}
	if limit > 0 {
		q.base = c.Now()
		q.arm(limit)
	}
	return q
}

// elapsed returns the time since the timer was made. With the real clock it
// reads only the monotonic clock: note runs once per event on a busy watch,
// and time.Now also reads the wall clock, which nothing here needs.
func (q *quietTimer) elapsed() time.Duration {
	if _, real := q.clock.(RealClock); real {
		return time.Since(q.base)
	}
	return q.clock.Now().Sub(q.base)
}

// arm starts the timer for d.
func (q *quietTimer) arm(d time.Duration) {
	q.t = q.clock.AfterFunc(d, func() {
		q.fired.Store(true)
		q.ring()
	})
}

// due reports, once, that the timer has fired: the caller must then call
// expired.
func (q *quietTimer) due() bool { return q.fired.Load() && q.fired.Swap(false) }

// note records activity now.
func (q *quietTimer) note() {
	if q.t != nil {
		q.last = q.elapsed()
	}
}

// expired is called when due reported true. It reports whether the
// silence has lasted limit; if not, it re-arms the timer for what is left.
func (q *quietTimer) expired() bool {
	silent := q.silence()
	if silent >= q.limit {
		return true
	}
	q.arm(q.limit - silent)
	return false
}

// silence returns how long nothing has happened.
func (q *quietTimer) silence() time.Duration { return q.elapsed() - q.last }

// stop releases the timer.
func (q *quietTimer) stop() {
	if q.t != nil {
		q.t.Stop()
	}
}
