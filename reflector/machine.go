package reflector

import "time"

// machine is the reflector's state machine: the state it is in, and the
// few facts that outlive any one state. It does no I/O: step takes what
// the I/O of a state came to and returns the next state, which is also the
// next I/O to perform (Reflector.perform does it). Only the goroutine
// executing Run touches it: no lock.
type machine struct {
	// state is where the last Run left the machine: a stopped, or nil
	// before the first Run. (While Run executes, the state lives in its
	// loop.)
	state state

	// synced: the store has received at least one complete snapshot.
	synced bool
	// paginatedBefore: the first list, at "0", came back in pages, so the
	// server has no watch cache for the resource (see pageLimit).
	paginatedBefore bool
	// watchListRefused: in WatchListAuto mode, the server showed it does
	// not support WatchList (see refusesWatchList and the transition
	// table's toListPagedRefused).
	watchListRefused bool
	// autoWatchList: the mode is WatchListAuto, so a refusal counts.
	autoWatchList bool

	// notServed: the last failure said the resource is not served
	// (KindNotServed), and no snapshot has been stored since; while it
	// holds, a repeated 404 is counted but not reported again. Any other
	// failure ends it, so the 404 after it is news again.
	notServed bool

	backoff backoffState
	// draw returns a uniform number in [0, 1): the backoff's jitter.
	// Randomness is an input, like time (Options.Rand).
	draw func() float64
}

// start returns the state a Run begins in: the transition table's answer
// to Run in the state the last Run left (idle before the first).
func (m *machine) start() state {
	s := m.state
	if s == nil {
		s = idle{}
	}
	return m.step(s, runStarted{})
}

// step returns the state that follows in, in the current state (as the
// I/O left it: a watch's rv is where its events got to): the verdict of
// the transition table's row for them, which also records what in teaches
// the machine. It performs no I/O.
func (m *machine) step(s state, in input) state {
	if f, ok := faultOf(in); ok {
		// What the input teaches, not a decision: a 404 for the resource
		// is reported once until something else happens (Reflector.report).
		m.notServed = f.kind == KindNotServed
	}
	return decide(s, in).then.next(m, s, in)
}

// backOff returns the wait before then: a backoff delay, at least the
// server's Retry-After, and at least what was left of a wait the failure
// cut short.
func (m *machine) backOff(then state, in input) backingOff {
	f, _ := faultOf(in)
	floor := max(time.Duration(retryAfter(f.err))*time.Second, f.waitLeft)
	return backingOff{then: then, delay: m.backoff.next(f.now, m.draw(), floor)}
}

// relistFrom is the relist that replaces s, a watch or the listing a wait
// leads to: at the resourceVersion the store has reached, or with a
// consistent read.
func relistFrom(s state, consistent bool) listing {
	l, ok := s.(listing)
	if !ok {
		w, _ := s.(watching)
		l = listing{rv: w.rv}
	}
	l.relist, l.via = true, viaAny
	l.consistent = l.consistent || consistent
	return l
}

// pagedFrom is the paged List that replaces the WatchList of listing s,
// at once.
func pagedFrom(s state, consistent bool) listing {
	l := s.(listing)
	l.via = viaPaged
	l.consistent = l.consistent || consistent
	return l
}
