package workqueue

import "time"

// Stats is a moment's picture of a Queue, for dashboards and alerts. The
// names follow client-go's workqueue metrics.
type Stats struct {
	// Depth is the number of items ready to be handed out (client-go's
	// workqueue_depth).
	Depth int
	// Waiting is the number of delayed items not yet due.
	Waiting int
	// Processing is the number of items handed out and not yet Done.
	Processing int
	// Adds counts the items that became dirty: adds of an item already
	// waiting to be processed are not counted (workqueue_adds_total).
	Adds uint64
	// Retries counts AddRateLimited calls (workqueue_retries_total).
	Retries uint64
	// LongestRunning is how long the oldest item still processing has been
	// at it (workqueue_longest_running_processor_seconds). A growing value
	// means a stuck worker. The queue times its items only once Stats has
	// been called: an item handed out before the first call counts from
	// that call. So a dashboard's first poll reads zero, and its later polls
	// the true figures. It is to the millisecond, for items held less than
	// 49 days.
	LongestRunning time.Duration
	// UnfinishedWork is the sum of how long every item still processing has
	// been at it (workqueue_unfinished_work_seconds), timed as
	// LongestRunning is.
	UnfinishedWork time.Duration
}

// Stats returns the queue's current figures. It costs one pass over the
// items that are dirty or being processed.
func (q *Queue[T]) Stats() Stats {
	q.lock()
	defer q.unlock()
	s := Stats{
		Depth:      q.nready,
		Waiting:    q.waiting.len(),
		Processing: q.nbusy,
		Adds:       q.adds,
		Retries:    q.retries,
	}
	now := q.millisLocked()
	if !q.timing {
		q.startTimingLocked(now)
	}
	for _, e := range q.items.all() {
		if !e.busy {
			continue
		}
		d := time.Duration(now-e.stamp) * time.Millisecond
		s.UnfinishedWork += d
		s.LongestRunning = max(s.LongestRunning, d)
	}
	return s
}

// startTimingLocked makes Get note when it hands an item out, and counts the
// items already in hand from now.
func (q *Queue[T]) startTimingLocked(now uint32) {
	q.timing = true
	for _, e := range q.items.all() {
		if e.busy {
			e.stamp = now
		}
	}
}
