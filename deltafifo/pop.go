package deltafifo

import (
	"context"
	"errors"
	"fmt"
)

// Pop waits until something is queued, then calls process with the unit at
// the head of the line: one key's Item, one whole relist, or one progress
// marker. It returns after process does.
//
// process runs without the queue's lock, so a slow consumer never blocks
// Add, Update, Delete or Replace. Two things make that safe. Pops take
// turns: a second Pop waits until the first one's process returns, so a key
// is never applied out of order. And until process returns, the queue
// treats the batch as already applied when it decides whether a Delete is
// news or which keys a relist dropped: process must therefore apply the
// batch to KnownObjects (if any) before it returns.
//
// What process returns decides the batch's fate:
//   - nil: the batch is delivered.
//   - an error wrapping ErrRequeue: the batch goes back to the front of
//     the line, in order, ahead of everything queued meanwhile, and later
//     deltas of its keys join it again. Pop returns the error. process must
//     not keep the batch in this case (the queue will reuse it).
//   - any other error: the batch counts as delivered (the queue cannot know
//     how much of it was applied, and retrying a batch that fails the same
//     way forever would wedge the consumer). Pop returns the error wrapped,
//     so it is never lost silently; Stats.Failed counts it.
//
// If process panics, the batch is put back as for ErrRequeue and the panic
// continues.
//
// Pop returns an error wrapping ctx.Err() if ctx ends first, and ErrClosed
// once the queue is closed and empty.
func (q *Queue) Pop(ctx context.Context, process func(Batch) error) error {
	return q.pop(ctx, 1, process)
}

// PopBatch is Pop for up to max Items at once, so that a consumer pays its
// per-call costs (locking its store, waking handlers) once per batch. The
// batch is the run of key units at the head of the line, all of distinct
// keys, stopping before a relist or a marker. A marker right after the run
// is folded into the batch as its ResourceVersion. A relist or a marker at
// the head is delivered alone, as by Pop. max must be at least 1.
func (q *Queue) PopBatch(ctx context.Context, max int, process func(Batch) error) error {
	if max < 1 {
		return fmt.Errorf("deltafifo: PopBatch max %d: %w", max, ErrInvalidArgument)
	}
	return q.pop(ctx, max, process)
}

func (q *Queue) pop(ctx context.Context, max int, process func(Batch) error) error {
	if process == nil {
		return fmt.Errorf("deltafifo: Pop with nil process: %w", ErrInvalidArgument)
	}
	q.mu.Lock()
	if err := q.waitForTurn(ctx); err != nil {
		q.mu.Unlock()
		return err
	}
	b := q.take(max)
	q.mu.Unlock()
	return q.run(b, process)
}

// waitForTurn blocks until a unit is queued and no other Pop is processing,
// the queue is closed and empty, or ctx ends. It is called, and returns,
// with mu held; it releases mu while it sleeps.
func (q *Queue) waitForTurn(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("deltafifo: pop: %w", err)
		}
		if !q.popping && q.waiting.len() > 0 {
			return nil
		}
		if q.closed && q.waiting.len() == 0 {
			return ErrClosed
		}
		if q.wake == nil {
			q.wake = make(chan struct{})
		}
		wake := q.wake
		q.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-wake:
		}
		q.mu.Lock()
	}
}

// take removes the next batch from the line and marks it in flight.
// Callers hold mu, and the line is not empty.
func (q *Queue) take(max int) Batch {
	q.popping = true
	head := q.dequeue()
	if head.kind != keyUnit || max == 1 {
		return head.batch()
	}
	items := make([]Item, 1, min(max, 1+q.waiting.len()))
	items[0] = head.item()
	last := head
	for len(items) < max {
		// A key whose newer unit waits further on (after a requeue) ends the
		// batch, so that a batch never holds one key twice.
		if q.entries[last.items[0].Key] != last {
			break
		}
		next := q.waiting.front()
		if next == nil || next.kind != keyUnit {
			break
		}
		last = q.dequeue()
		items = append(items, last.item())
	}
	b := Batch{Items: items}
	if next := q.waiting.front(); next != nil && next.kind == markerUnit {
		b.ResourceVersion = q.dequeue().body.rv
	}
	return b
}

// dequeue moves the head unit from the line to the in-flight batch.
func (q *Queue) dequeue() *unit {
	u := q.waiting.popFront()
	u.state = inFlight
	q.depth -= u.size()
	q.deltas -= u.deltaCount()
	q.inFlight = append(q.inFlight, u)
	return u
}

// item returns a key unit's Item as the consumer sees it.
func (u *unit) item() Item {
	it := u.items[0]
	it.InInitialList = u.initial
	return it
}

// batch returns the Batch that delivers u alone.
func (u *unit) batch() Batch {
	switch u.kind {
	case keyUnit:
		u.items[0].InInitialList = u.initial
		return Batch{Items: u.items[:]} // points into u: no allocation
	case relistUnit:
		return Batch{Items: u.body.items, Relist: true, ResourceVersion: u.body.rv}
	}
	return Batch{ResourceVersion: u.body.rv}
}

// outcome is what became of an in-flight batch.
type outcome uint8

const (
	panicked  outcome = iota // process panicked: requeue, then re-panic
	delivered                // process returned nil
	requeued                 // process returned ErrRequeue
	failed                   // process returned another error
)

// run calls process without the lock and settles the batch afterwards,
// even if process panics.
func (q *Queue) run(b Batch, process func(Batch) error) error {
	result := panicked
	defer func() { q.finish(result) }()
	err := process(b)
	switch {
	case err == nil:
		result = delivered
		return nil
	case errors.Is(err, ErrRequeue):
		result = requeued
	default:
		result = failed
	}
	return fmt.Errorf("deltafifo: process: %w", err)
}

// finish settles the in-flight batch and lets the next Pop take its turn.
func (q *Queue) finish(result outcome) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.popping = false
	back := result == panicked || result == requeued
	if back {
		q.counters.Requeued++
	} else {
		q.counters.Delivered++
		if result == failed {
			q.counters.Failed++
		}
	}
	if !q.settleInline(back) {
		q.settleInFlight(back)
	}
	// A Pop waiting for its turn can only take it if something waits; a
	// Pop waiting for the queue to close must hear of it.
	if q.waiting.len() > 0 || q.closed {
		q.signal()
	}
}

// settleInFlight puts the batch a Pop took back at the front of the line,
// in its original order, or forgets it. Callers hold mu.
func (q *Queue) settleInFlight(back bool) {
	if back {
		for i := len(q.inFlight) - 1; i >= 0; i-- { // push the last first
			q.requeue(q.inFlight[i])
		}
	} else {
		for _, u := range q.inFlight {
			q.retire(u)
		}
	}
	clear(q.inFlight) // drop references so delivered objects can be collected
	q.inFlight = q.inFlight[:0]
}

// requeue puts an in-flight unit back at the front of the line.
func (q *Queue) requeue(u *unit) {
	u.state = queued
	q.waiting.pushFront(u)
	q.depth += u.size()
	q.deltas += u.deltaCount()
}

// retire forgets a processed unit: from now on KnownObjects, not the queue,
// says what the consumer holds for its keys.
func (q *Queue) retire(u *unit) {
	switch u.kind {
	case keyUnit:
		if key := u.items[0].Key; q.entries[key] == u {
			delete(q.entries, key)
		}
	case relistUnit:
		if q.relist == u {
			q.relist = nil
		}
	}
	if u.initial {
		q.initialLeft--
		q.checkSynced()
	}
}
