package informer

// A fast path for the read-your-writes bookkeeping (freshness.go). Delete
// this file and its two hooks (freshness's clock field, whose reads in
// handed and advanceApplied become time.Since from an epoch of freshness's
// own, and the call to stopClock in Run), and the informer is still correct, only
// slower; Freshness's SinceAdvanced is then exact instead of exact to
// within stampPeriod. Its test goes with it:
// freshness_clock_internal_test.go.
//
// Why it pays: on a busy watch whose events the queue applies at once
// (inline.go), every event's resourceVersion is handed on and stamped, and
// reading the clock each time (about 50-100ns on the shared VM, whose
// clock source is virtualised) was the largest part of what the
// bookkeeping costs an event (BenchmarkHanded). Here a moment is read at
// most once per stampPeriod: until a timer says the last reading is that
// old, a write (and so the move it leads to) is stamped with the last reading. The stamp is thus early
// by less than stampPeriod (plus however late the timer's callback runs),
// so SinceAdvanced errs on the side of a cache that looks staler than it
// is, never fresher; it is meant for staleness counted in seconds or
// minutes (a bookmark interval).

import (
	"sync/atomic"
	"time"
)

// stampPeriod is how old the last reading of the clock may get before a
// move reads the clock again: the precision of Freshness.SinceAdvanced.
const stampPeriod = 10 * time.Millisecond

// stampClock gives the moments writes are handed and the applied
// resourceVersion moves, as offsets from its first reading (epoch). An offset reads only the
// monotonic clock, about half the cost of time.Now. The zero value is
// ready to use; it is not safe for concurrent use (read is called under
// freshness.mu), except that its timer sets stale from its own goroutine.
type stampClock struct {
	epoch time.Time     // the first reading; zero before it
	last  time.Duration // the last reading, as an offset from epoch
	timer *time.Timer   // fires stampPeriod after the last reading; nil before the first
	stale atomic.Bool   // set by timer: last is stampPeriod old, read the clock again
}

// read returns now as an offset from epoch, give or take stampPeriod: the
// last reading, unless that is stampPeriod old.
//
// The common case, the last reading, is kept small enough to be inlined
// into the bookkeeping of every event (freshness.go's handed); readAgain
// reads the clock.
func (c *stampClock) read() time.Duration {
	if c.timer != nil && !c.stale.Load() {
		return c.last
	}
	return c.readAgain()
}

// readAgain reads the clock, sets last, and arms the timer that marks
// last stale after stampPeriod.
func (c *stampClock) readAgain() time.Duration {
	if c.epoch.IsZero() {
		c.epoch = time.Now()
	}
	c.last = time.Since(c.epoch)
	c.stale.Store(false)
	if c.timer == nil {
		c.timer = time.AfterFunc(stampPeriod, func() { c.stale.Store(true) })
	} else {
		c.timer.Reset(stampPeriod)
	}
	return c.last
}

// stopClock stops the clock's timer, so that nothing of the informer is
// left pending once Run has returned. A later read would start it again.
func (f *freshness) stopClock() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.clock.timer != nil {
		f.clock.timer.Stop()
		f.clock.stale.Store(true)
	}
}
