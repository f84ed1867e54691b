package processor

import "time"

// HandlerStats is a snapshot of one handler's progress: how far behind the
// stream it is and how long it takes per notification. These are the
// per-handler lag figures client-go does not expose.
type HandlerStats struct {
	// Name is the registration's name.
	Name string
	// Pending is the number of notifications distributed to the handler (or
	// waiting in its initial replay) that it has not finished handling. It
	// drops to 0 when the handler is removed or the processor stops, since
	// the backlog is then discarded.
	Pending int
	// MaxPending is the highest Pending observed: the worst backlog. It is
	// observed each time the handler's goroutine takes work (a batch of up
	// to 32 notifications) and each time Stats is called, so it can miss a
	// peak between two observations by at most one batch.
	MaxPending int
	// Delivered counts the notifications the handler has finished handling,
	// including those during which it panicked.
	Delivered uint64
	// Panics counts the notifications during which the handler panicked.
	Panics uint64
	// LastHandleDuration is how long the latest Handle call took, measured
	// on the monotonic clock. To read
	// the clock once per notification, back-to-back calls share readings,
	// so a duration includes the few nanoseconds of bookkeeping between
	// two calls.
	LastHandleDuration time.Duration
	// MaxHandleDuration is the longest Handle call so far.
	MaxHandleDuration time.Duration
	// BufferCapacity is how many notifications the journal pages the
	// handler keeps alive can hold: the pages from the one it is reading to
	// the one being written (see the package documentation). It grows while
	// the handler falls behind and falls back as it catches up. It is 0 once
	// the handler is removed or its goroutine has exited.
	BufferCapacity int
	// Coalesced counts the notifications the handler was not called for
	// because its backlog, past HandlerOptions.BacklogLimit, merged them
	// into a later one of the same key (or found that an Add and its
	// Delete both came and went unseen). It stays 0 with KeepAllUpdates.
	Coalesced uint64
	// Coalescing is true while the handler's backlog is bounded by keys:
	// it fell more than its limit behind and has not caught up yet.
	Coalescing bool
}

// stopwatch reads the time elapsed since the processor was created, for
// measuring handling durations. It reads only the monotonic clock
// (time.Since): time.Now also reads the wall clock, and two time.Now calls
// per notification were a visible share of the per-delivery cost. In a
// testing/synctest bubble it reads the bubble's fake time, which is how the
// tests make durations exact.
//
// A stopwatch is immutable and safe for concurrent use.
type stopwatch struct {
	base time.Time
}

func newStopwatch() stopwatch { return stopwatch{base: time.Now()} }

// read returns the time elapsed since the stopwatch was created.
func (s stopwatch) read() time.Duration { return time.Since(s.base) }

// HandlerStats returns the Stats of every registered handler, in the order
// they were added: what a metrics collector reads at each scrape.
func (p *Processor) HandlerStats() []HandlerStats {
	regs := *p.regs.Load()
	out := make([]HandlerStats, len(regs))
	for i, r := range regs {
		out[i] = r.Stats()
	}
	return out
}
