package deltafifo

// The inline hand-off: a write that finds the queue idle is applied at
// once, on the writer's goroutine. Delete this file and its hooks (the
// Inline and InlineIf fields of Options, the inline field of Queue, the
// line of New that sets it, and six lines that call the methods below: in
// write, unitOf, forEachCandidate, Stats and finish), and the queue is still
// correct, only slower: every delta then waits in line for the consumer's
// Pop. Its tests go with it: inline_test.go, testdata/inline.txt and the
// inline command of script_test.go.
//
// Why it pays: a consumer that keeps up with its producer spends most of
// its life asleep in Pop, and waking a goroutine for every delta costs more
// than applying the delta (bench: BenchmarkPipeline, handlers=1: the
// informer's CPU per event, against the floor's).
//
// What it does: a write that finds nothing waiting and nothing in flight
// turns its delta into an in-flight unit at once and hands it to the
// consumer's process function: exactly what a Pop would have done a moment
// later, minus the hand-off. The in-flight rule holds unchanged, so a Pop
// waits its turn meanwhile, and a write from another goroutine queues
// behind the inline unit. As soon as anything waits in line, writes queue
// as usual, so a slow consumer never slows the producer by more than one
// delta. The owner may decline case by case (InlineIf): the informer declines
// when it has many handlers, whose goroutines are better woken from the
// consumer's.
//
// process obeys Pop's contract, with one difference: the Batch it gets is
// valid only until it returns, because the queue reuses the unit (spare)
// for the next inline delta, so that a consumer that keeps up allocates no
// unit at all. Its error is returned by the write that ran it, wrapped like
// Pop's; ErrRequeue puts the delta in line for the next Pop. process must
// not call back into the queue's writers.
//
// The owner turns it on with Options.Inline (and InlineIf); the informer
// does, in its New, unless a test turns it off there.

import "time"

// inlineHandOff is a queue's inline hand-off; the zero value is off.
type inlineHandOff struct {
	// Set before the first write and never changed: read without the lock.
	process func(Batch) error
	ok      func() bool
	// unit is the unit process is applying, or nil. It is in flight like
	// the units of Queue.inFlight, but listed neither in entries nor in
	// inFlight, so that the busiest path makes no map writes: unitOf and
	// forEachCandidate look here. Guarded by Queue.mu.
	unit *unit
	// spare is the unit the next inline delta uses: a delivered inline unit
	// comes back here. Guarded by Queue.mu.
	spare *unit
}

// wanted reports whether the next write may go inline, asking ok without
// the queue's lock.
func (h *inlineHandOff) wanted() bool {
	return h.process != nil && (h.ok == nil || h.ok())
}

// holding returns the inline unit if it holds key, else nil.
func (h *inlineHandOff) holding(key string) *unit {
	if u := h.unit; u != nil && u.items[0].Key == key {
		return u
	}
	return nil
}

// inFlight is how many Items the hand-off has in flight (Stats.InFlight).
func (h *inlineHandOff) inFlight() int {
	if h.unit != nil {
		return 1
	}
	return 0
}

// tryInline takes d in flight at once, as if it had been queued and popped
// in one step, if wanted (from wanted) and the queue is idle: nothing waits
// in line and no batch is in flight. The caller then runs the batch with
// the hand-off's process. Callers hold mu.
func (q *Queue) tryInline(wanted bool, key string, d Delta) (Batch, bool) {
	if !wanted || q.popping || q.waiting.len() > 0 {
		return Batch{}, false
	}
	q.counters.Enqueued++
	u := q.inline.spare
	q.inline.spare = nil
	if u == nil {
		u = new(unit)
	}
	u.initKey(key, d)
	q.seq++
	u.seq, u.seg, u.state = q.seq, q.seg, inFlight
	q.inline.unit = u
	q.popping = true
	return u.batch(), true
}

// settleInline settles the inline unit, if the batch in flight is it, and
// reports whether it was. Delivered, the unit becomes the spare; given
// back, it becomes an ordinary queued unit at the front of the line, which
// later deltas of its key join, unless one is already queued behind it
// (the newest unit of a key is the one they join). Callers hold mu.
func (q *Queue) settleInline(back bool) bool {
	u := q.inline.unit
	if u == nil {
		return false
	}
	q.inline.unit = nil
	if !back {
		*u = unit{} // drop the references to the delivered objects
		q.inline.spare = u
		return true
	}
	u.queuedAt = time.Now() // it skipped the line, so it was never stamped
	if key := u.items[0].Key; q.entries[key] == nil {
		q.entries[key] = u
	}
	q.requeue(u)
	return true
}
