// Package deltafifo is the queue between the reflector, which learns about
// changes from the API server, and the consumer, which applies them to the
// cache (the indexer) and tells the handlers.
//
//	API server ──list/watch──▶ reflector ──Add/Update/Delete/Replace/Bookmark──▶ Queue
//	                                                                              │ Pop
//	handlers ◀── processor ◀── consumer: apply to indexer ◀───────────────────────┘
//	                                     (the indexer is the queue's KnownObjects)
//
// The two sides run at different speeds. The reflector must never wait for a
// handler (the watch would fall behind and the server would drop it), and a
// handler must never see changes out of order. A queue in between decouples
// them; what kind of queue is the interesting part.
//
// # Deltas per key
//
// The queue does not hold events; it holds, for every object key, the list
// of changes (Deltas) the consumer has not seen yet, oldest first. Keys are
// handed out in the order they first arrived, and a key that changes again
// while it waits joins its existing place instead of queueing again. So:
//
//   - the consumer sees everything that happened to an object since it last
//     saw it, in one Item, in order;
//   - a busy object cannot starve the others: it holds one place in line;
//   - the number of Items waiting is at most the number of keys.
//
// # Deletes and tombstones
//
// Two deletes in a row collapse into one, keeping the one with the most
// information (a real delete, carrying the final state, beats a tombstone).
// A delete for a key that is neither queued nor known to the consumer is
// dropped: there is nothing to delete, typically because a relist already
// produced the deletion.
//
// When the reflector must relist (its resourceVersion expired with 410, the
// server has not reached it, or it has to get past a frame it could not
// decode), it lists everything again and calls Replace. (A watch that merely
// broke is resumed from its last resourceVersion, without a list.) Objects
// the consumer holds that the list lacks were deleted while
// nobody was watching: the queue queues a tombstone for each, a Deleted
// delta with FinalStateUnknown set, carrying the last state the consumer
// knew (its newest queued object if it has deltas waiting, else its object
// in KnownObjects). Handlers must be prepared for a delete whose object is
// stale; that is the price of having missed the real event.
//
// # The in-flight rule
//
// Pop calls the process function without holding the queue's lock, so a
// slow consumer never blocks the reflector. (client-go's DeltaFIFO holds its
// lock during process, which is why a slow process function there stalls
// the watch.)
// This creates a window: the consumer has taken a batch but not yet written
// it to KnownObjects. If the reflector then reports a Delete of that key, or
// a relist without it, the queue must not conclude "the consumer does not
// have it". So the queue answers "what will the consumer hold for this
// key?" in three layers, newest first: the key's newest queued or in-flight
// Item, then a pending atomic relist, then KnownObjects. An in-flight batch
// counts as applied. Two requirements follow: process must apply its batch
// to KnownObjects before returning, and KnownObjects must change only there.
// Pops take turns (a second Pop waits for the first's process to return), so
// there is at most one batch in flight and a key is never applied twice at
// once or out of order.
//
// If process returns an error wrapping ErrRequeue (or panics), the batch goes
// back to the front of the line, in order. Any other error drops the batch
// and is returned by Pop (and counted in Stats.Failed): the queue cannot tell
// how much of the batch was applied, and retrying a batch that fails the
// same way forever would wedge the consumer.
//
// # Skipping the line when the consumer is idle
//
// One fast path, off unless the consumer asks for it (Options.Inline; the
// informer does), lives in a file of its own (inline.go): a write that
// finds the queue idle, nothing waiting and nothing in flight, is applied
// at once on the writer's goroutine, exactly as a Pop would have applied it
// a moment later, minus the goroutine wake-up. Every rule above holds unchanged, and a queue without it is the
// same queue, only slower.
//
// # Relists: per-key or atomic
//
// By default (per-key mode, like client-go's DeltaFIFO) Replace appends a
// Replaced delta to every listed key's Item and a tombstone to every dropped
// key's, each in its key's place in line, followed by a marker batch
// carrying the relist's resourceVersion. With Options.AtomicRelist, the
// whole Replace is one unit, delivered as a single Batch with Relist set:
//
//	                     per-key mode                      AtomicRelist
//	delivered as         one Item per key, in key order    one Batch{Relist: true}
//	tombstones come      after the listed objects          first, before the listed objects
//	consumer's cache     mixes old and new state until     swaps from old to new state
//	                     the last key is applied           at once (indexer.Replace)
//	deltas queued        merge into the keys' Items; the   delivered before the relist,
//	  before Replace       relisted state follows them     untouched, in order
//	deltas queued        join a key's Item if it still     queue behind the relist: it is a
//	  after Replace        waits (it stays ahead of them)  wall no delta jumps over
//	ResourceVersion      on a marker batch after the       on the relist batch itself
//	                       relist's last Item
//	Resync meanwhile     Sync for keys with nothing        does nothing while a relist is
//	                       pending                         pending (it re-delivers all)
//
// Why the wall: a delta that arrived after the relist describes newer state.
// Were it merged into a key's Item queued before the relist, it would be
// applied first and then overwritten by the older relisted object. So in
// atomic mode a key can have two Items in line, one on each side of a
// relist. While a relist is pending (queued or in flight), it stands in for
// KnownObjects: a Delete of a key only the relist lists is news, a Delete of
// a key the relist drops is not, and a second relist computes its tombstones
// against the first.
//
// In atomic mode handlers see every deletion of a relist before any of its
// updates, and readers of the cache never see half a relist. The cost: the
// relist's objects are held in one unit even for keys that already wait in
// line, and PopBatch never merges a relist with per-key Items.
//
// # Update compaction: handlers see the newest state, not every version
//
// By default (Options.KeepAllUpdates off), a change of state (Updated or
// Replaced) replaces the change (or Sync) just before it in the same Item.
// What a handler then sees of an object that changes faster than it is
// processed:
//
//   - The cache and the handlers always reach the newest state.
//   - No Added and no Deleted is ever merged away: every creation and
//     deletion the watch reported is delivered, in order.
//   - In an update notification, the old object is what the cache held
//     before, which is what the handler saw last: old-to-new stays
//     consistent, it just spans more than one server change.
//   - Order across keys, HasSynced, InInitialList and resource versions are
//     unaffected.
//
// What it does not see is every intermediate version of an object.
// Kubernetes never promised that (a relist skips versions too), and a
// level-triggered controller does not need it; a handler that counts
// updates or audits every transition must use KeepAllUpdates (and even
// then it misses what a relist skips).
//
// Why it is the default: the queue's memory. With a stalled consumer, a
// queue that keeps every event grows without bound (client-go's RealFIFO
// does). With compaction, memory grows with the number of keys and with
// creations and deletions, not with updates or relists: an object updated
// a million times while the consumer sleeps occupies one Item of at most
// two deltas (its Added, if unseen, and its newest state). That bounds the
// queue, in front of the cache; a slow handler's own backlog, behind it,
// is the processor's to bound (processor's doc, "Bounded backlogs").
//
// # Syncing
//
// HasSynced turns true once every item of the first Replace has been
// processed: its process function returned, not merely popped. (If the
// first write is an Add, Update or Delete, it is true at once, as in
// client-go.) Items of the first Replace carry InInitialList, so a handler
// can tell "learning the initial state" from "the world changed". Resync
// queues a Sync delta for every known key that has nothing pending or in
// flight: a key with pending deltas will reach the handlers anyway, and its
// object in KnownObjects is about to be replaced, so a Sync would carry
// stale state.
//
// # Resource versions
//
// Batch.ResourceVersion, when set, is the version the consumer's state has
// reached once the batch is applied. A relist batch carries its Replace's
// version; a per-key Replace ends with a marker batch carrying it; Bookmark
// queues a marker. Per-key Items carry none: merging makes a key run ahead
// of others, so no single version describes the cache after one Item.
// PopBatch folds a marker that directly follows its Items into the batch.
//
// # Transform
//
// Options.Transform runs exactly once on every object given to Add, Update,
// Delete and Replace, before the lock is taken, and never on a tombstone or
// a Sync (their objects already went through it). If it fails, the caller
// gets the error and nothing is queued: for Replace, nothing at all, since a
// partial relist would produce tombstones for objects that exist.
//
// # Concurrency
//
// A Queue is safe for concurrent use. One mutex guards all of its state
// (the line of waiting units, the per-key index, the pending relist, the
// sync counters and the statistics); it is never held while user code runs
// (KeyFunc, Transform, process), only while KnownObjects is read.
// HasSynced
// reads an atomic and never waits. Errors are documented in errors.go.
//
// # Reading the code
//
// queue.go (writes), pop.go (Pop and the in-flight rule), replace.go
// (relists and resync), delta.go (the two coalescing rules) and unit.go
// (what waits in line) are the queue. inline.go is the one fast path, and
// can be skipped on a first reading. The delta sequences above are
// specified by the scripts in testdata/, run by script_test.go: each says
// why, then the calls, then exactly what the consumer receives.
package deltafifo
