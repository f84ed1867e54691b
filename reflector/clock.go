package reflector

import "time"

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
// the timer fires, expired checks whether the silence was real and, if not,
// re-arms for the remainder. A limit <= 0 disables it: C returns nil, a
// channel that never delivers.
//
// Not safe for concurrent use: it belongs to the loop that selects on it.
type quietTimer struct {
	clock Clock
	limit time.Duration
	last  time.Time // when activity was last noted
	t     Timer     // nil when disabled
}

func newQuietTimer(c Clock, limit time.Duration) *quietTimer {
	q := &quietTimer{clock: c, limit: limit}
	if limit > 0 {
		q.last = c.Now()
		q.t = c.NewTimer(limit)
	}
	return q
}

// C returns the channel to select on (nil when disabled).
func (q *quietTimer) C() <-chan time.Time {
	if q.t == nil {
		return nil
	}
	return q.t.C()
}

// note records activity at now.
func (q *quietTimer) note(now time.Time) { q.last = now }

// expired is called when C delivered. It reports whether the silence has
// lasted limit; if not, it re-arms the timer for what is left.
func (q *quietTimer) expired() bool {
	silent := q.clock.Now().Sub(q.last)
	if silent >= q.limit {
		return true
	}
	q.t = q.clock.NewTimer(q.limit - silent)
	return false
}

// silence returns how long nothing has happened.
func (q *quietTimer) silence() time.Duration { return q.clock.Now().Sub(q.last) }

// stop releases the timer.
func (q *quietTimer) stop() {
	if q.t != nil {
		q.t.Stop()
	}
}
