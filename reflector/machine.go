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
	// not support WatchList (see refusesWatchList).
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

// start returns the state a Run begins in: the first listing on the first
// run; on a later one, where the last Run stopped (with no stream: it was
// closed), unless that is a watch from no position (see resumable).
func (m *machine) start() state {
	st, ok := m.state.(stopped)
	if !ok || st.resume == nil {
		return listing{}
	}
	switch s := st.resume.(type) {
	case watching:
		return resumable(watching{rv: s.rv}, m.synced)
	case listing:
		s.via = viaAny
		return s
	}
	return listing{relist: m.synced}
}

// step returns the state that follows in, in the current state (as the
// I/O left it: a watch's rv is where its events got to), as the transition
// table decides, and records what in teaches the machine. It performs no
// I/O.
func (m *machine) step(s state, in input) state {
	if in.what == ioFailed {
		m.notServed = in.kind == KindNotServed
	}
	if in.what == snapshotStored {
		m.notServed = false
		m.synced = true
		if in.paged {
			m.paginatedBefore = true
		}
	}
	if in.what == ioFailed && in.op == opWatchList && m.autoWatchList && refusesWatchList(in.err) {
		m.watchListRefused = true
	}
	return m.apply(decide(s, in).then, s, in)
}

// apply carries out a verdict.
func (m *machine) apply(v verdict, s state, in input) state {
	l, _ := s.(listing)
	w, _ := s.(watching)
	switch v {
	case toWatch:
		if in.what == snapshotStored {
			return watching{rv: in.rv, stream: in.stream}
		}
		return resumable(watching{rv: w.rv}, m.synced)
	case toBackoffWatch:
		return m.backOff(resumable(watching{rv: w.rv}, m.synced), in)
	case toBackoffRelist, toBackoffRelistConsistent:
		return m.backOff(relistFrom(heading(s), v == toBackoffRelistConsistent), in)
	case toListConsistent:
		return listing{rv: l.rv, consistent: true, relist: l.relist}
	case toBackoffList:
		l.via = viaAny
		return m.backOff(l, in)
	case toListPaged, toListPagedConsistent:
		l.via = viaPaged
		l.consistent = l.consistent || v == toListPagedConsistent
		return l
	case toListUnpaged:
		l.via = viaUnpaged
		return l
	case toProbe:
		probe := relistFrom(heading(s), true)
		probe.relist = m.synced
		return backingOff{then: probe, delay: m.backoff.probe(in.now, m.draw())}
	case toResume:
		return s.(backingOff).then
	}
	return stopped{resume: heading(s)}
}

// backOff returns the wait before then: a backoff delay, at least the
// server's Retry-After, and at least what was left of a wait the failure
// cut short.
func (m *machine) backOff(then state, in input) backingOff {
	floor := max(time.Duration(retryAfter(in.err))*time.Second, in.waitLeft)
	return backingOff{then: then, delay: m.backoff.next(in.now, m.draw(), floor)}
}

// resumable turns a planned watch into a relist when the store's
// resourceVersion is no position at all. A watch from "" or "0" does not
// resume: it starts over with synthetic ADDED events for what exists now,
// and objects deleted in between are never reported, so the store would
// keep them forever. That happens when nothing since the last snapshot has
// carried a resourceVersion (an empty server answers a WatchList with a
// bookmark at "0"), or while a watch from "0" was still replaying. Only a
// relist, whose Replace removes what is gone, recovers from there.
func resumable(w watching, synced bool) state {
	if replaysState(w.rv) {
		return listing{rv: w.rv, relist: synced}
	}
	return w
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
