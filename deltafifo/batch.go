package deltafifo

import "time"

// Item is everything that happened to one key since the consumer last saw
// it: its deltas, oldest first.
type Item struct {
	Key    string
	Deltas Deltas // never empty
	// InInitialList is true for items that belong to the first Replace:
	// the objects that existed when the consumer started. A handler can
	// use it to tell "I am learning about the world" from "the world
	// changed".
	InInitialList bool
}

// Batch is what one call of a process function receives.
//
// There are three shapes:
//   - Items of distinct keys, Relist false: per-key deltas, to apply in order.
//   - Relist true: one whole Replace, delivered at once (Options.AtomicRelist).
//     Items holds the tombstones first, then one Replaced delta for every
//     listed object; the consumer swaps its state for exactly the listed set.
//   - No Items, ResourceVersion set: a progress marker (a bookmark, or the
//     end of a per-key Replace). Nothing to apply; record the version.
//
// A batch is read-only. While process runs, its slices may still be the
// queue's own memory for those keys, which the queue reads to answer a
// concurrent Delete, Replace or Resync: process may read them and keep
// them, but never modify them. Once process has returned nil the queue
// never touches them again; after ErrRequeue (or a panic) it takes them
// back, and process must not keep them.
type Batch struct {
	Items  []Item
	Relist bool
	// ResourceVersion, when not empty, is the version the consumer's state
	// has reached once this batch (and everything before it) is applied.
	// It is empty when no such version is known, which is the case for
	// per-key items: a key can be ahead of the others because later deltas
	// join the Item that already holds its place.
	ResourceVersion string
}

// Stats is a snapshot of the queue's backlog and counters, for metrics and
// for tests that check what update compaction bounds.
type Stats struct {
	// Depth is the number of Items waiting: one per queued key, plus one
	// per item of every queued relist. In-flight items are not counted.
	Depth int
	// Deltas is the number of deltas waiting in those Items. With update
	// compaction on, it stays close to Depth however many updates arrive.
	Deltas int
	// OldestAge is how long the unit at the head of the queue has waited
	// (on the monotonic clock); zero when nothing waits. A growing
	// OldestAge means the consumer is not keeping up.
	OldestAge time.Duration
	// InFlight is the number of Items handed to a process function that
	// has not returned yet.
	InFlight int

	Enqueued       uint64 // deltas accepted, before coalescing
	Coalesced      uint64 // deltas absorbed by the delete and update rules
	IgnoredDeletes uint64 // deletes for keys neither queued nor known
	Delivered      uint64 // batches whose process function returned
	Requeued       uint64 // batches given back with ErrRequeue (or a panic)
	Failed         uint64 // batches whose process function returned another error
}
