package deltafifo

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer/internal/objkey"
)

// KnownObjects is the consumer's view of what it already holds: in the
// informer, the indexer the popped deltas are applied to. The queue reads it
// to decide three things: whether a Delete is news (Delete), which objects a
// relist no longer contains (Replace), and what to re-deliver (Resync).
//
// It must change only inside a process function, while the batch that
// changes it is in flight: that is what lets the queue know, at any moment,
// whether a key's state is in KnownObjects or still on its way there.
type KnownObjects interface {
	ListKeys() []string
	Get(key string) (runtime.Object, bool)
}

// Options configures a Queue. The zero value is a working queue: keys by
// MetaNamespaceKey, no known objects, no transform, per-key relists, and
// update compaction on.
type Options struct {
	// KeyFunc computes keys; nil means MetaNamespaceKey.
	KeyFunc KeyFunc
	// KnownObjects is the consumer's store. Without it the queue only knows
	// what is queued or in flight: a Delete of a key already delivered is
	// ignored, and a relist cannot detect deletions of delivered keys.
	KnownObjects KnownObjects
	// Transform, if set, runs exactly once on every object given to Add,
	// Update, Delete and Replace, before it is queued, and never on a
	// tombstone or a Sync (their objects were transformed on the way in).
	// A typical use strips managedFields to save memory. It may modify the
	// object in place. It must not change the object's key. Its error is
	// returned to the caller and nothing is queued for that call.
	Transform func(runtime.Object) (runtime.Object, error)
	// AtomicRelist delivers every relist (Replace) as one Relist batch
	// instead of one Replaced delta per key, so that the consumer can swap
	// it in at once; informer.Options.AtomicRelist sets it. See the
	// package doc.
	AtomicRelist bool
	// KeepAllUpdates turns off update compaction: every Updated delta is
	// kept, so memory grows with the number of events while the consumer
	// is stalled. See the package doc for what compaction does and does
	// not change.
	KeepAllUpdates bool
	// Inline, if set, turns on the inline hand-off (inline.go): a write
	// that finds the queue idle (nothing waiting, nothing in flight) is
	// handed to Inline at once, on the writer's goroutine, instead of
	// waiting for the consumer's next Pop, which saves waking the consumer
	// for every delta when it keeps up. Inline is the consumer's process
	// function, the one its Pops are given (the informer's applies a batch
	// to its cache and handlers), with one difference: the Batch it gets
	// is valid only until it returns. It must not call back into the
	// queue's writers.
	Inline func(Batch) error
	// InlineIf, if set, is asked before each write that could go to
	// Inline; false queues that write as usual. Nil means always.
	InlineIf func() bool
}

// Queue holds, for every object key, the deltas the consumer has not seen
// yet, and hands them out in the order the keys first arrived.
//
// A Queue is safe for concurrent use. It is built for one producer (a
// reflector) and one consumer loop; concurrent Pops are allowed but take
// turns, so that two batches are never in flight at once and no key is ever
// applied out of order.
type Queue struct {
	// Set by New and never changed: read without the lock.
	keyOf          KeyFunc
	known          KnownObjects
	transform      func(runtime.Object) (runtime.Object, error)
	atomicRelist   bool
	keepAllUpdates bool
	// inline is the inline hand-off (inline.go), off unless
	// Options.Inline is set; its fields say what guards them.
	inline inlineHandOff

	// synced mirrors the lock-guarded sync state so that HasSynced, which
	// informers poll, never waits for the lock.
	synced atomic.Bool

	// mu guards every field below it.
	mu sync.Mutex
	// waiting is the line of queued units, oldest first.
	waiting line
	// entries maps a key to its newest unit, queued or in flight. A key can
	// have older units too (one in flight, or one before a relist wall);
	// only the newest matters to decide what the consumer will end up with.
	entries map[string]*unit
	// relist is the newest relist unit not yet processed (queued or in
	// flight), nil if none. While it exists, it, not KnownObjects, says
	// what the consumer holds for keys with no newer unit.
	relist *unit
	// seg is the barrier generation. It grows at every atomic relist, so
	// that deltas arriving after a relist never join a unit queued before
	// it: that would deliver them before the relist, which would then
	// overwrite them with older state.
	seg uint32
	// seq numbers units in creation order.
	seq uint64
	// popping is true while a process function runs; Pops take turns.
	popping bool
	// inFlight holds the units of the batch being processed. Its backing
	// array is reused from batch to batch.
	inFlight []*unit
	// wake is closed to wake every waiting Pop, then set to nil; a waiter
	// that finds it nil makes a new one. Channels, unlike sync.Cond, can be
	// selected together with ctx.Done().
	wake   chan struct{}
	closed bool
	// populated turns true at the first Add, Update, Delete or Replace;
	// initialLeft counts units of the first Replace not yet processed.
	// HasSynced is populated && initialLeft == 0.
	populated   bool
	initialLeft int
	// depth and deltas are Stats.Depth and Stats.Deltas, kept up to date
	// so that Stats is O(1).
	depth, deltas int
	counters      Stats
}

// New returns an empty queue configured by opts.
func New(opts Options) *Queue {
	q := &Queue{
		keyOf:          opts.KeyFunc,
		known:          opts.KnownObjects,
		transform:      opts.Transform,
		atomicRelist:   opts.AtomicRelist,
		keepAllUpdates: opts.KeepAllUpdates,
		inline:         inlineHandOff{process: opts.Inline, ok: opts.InlineIf},
		entries:        make(map[string]*unit),
	}
	if q.keyOf == nil {
		q.keyOf = MetaNamespaceKey
	}
	return q
}

// Add queues an Added delta: the watch reported the object created.
func (q *Queue) Add(obj runtime.Object) error { return q.write(Added, obj) }

// Update queues an Updated delta: the watch reported the object modified.
func (q *Queue) Update(obj runtime.Object) error { return q.write(Updated, obj) }

// Delete queues a Deleted delta carrying the object's final state. A delete
// of a key that is neither queued, in flight nor known to the consumer is
// ignored: the consumer has nothing to delete (typically a relist already
// produced the deletion).
func (q *Queue) Delete(obj runtime.Object) error { return q.write(Deleted, obj) }

// write is Add, Update and Delete: key and transform outside the lock, so a
// slow transform never holds up Pop, then queue the delta.
func (q *Queue) write(t DeltaType, obj runtime.Object) error {
	key, obj, err := q.admit(obj)
	if err != nil {
		return fmt.Errorf("deltafifo: %s: %w", t, err)
	}
	inline := q.inline.wanted() // asked without the lock
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return ErrClosed
	}
	q.populate(0)
	if t == Deleted && !q.deleteIsNews(key) {
		q.counters.IgnoredDeletes++
		q.mu.Unlock()
		return nil
	}
	d := Delta{Type: t, Object: obj}
	if b, ok := q.tryInline(inline, key, d); ok {
		q.mu.Unlock()
		return q.run(b, q.inline.process)
	}
	q.enqueue(key, d, &opClock{})
	q.mu.Unlock()
	return nil
}

// unitOf returns the newest unit, queued or in flight, that holds key, or
// nil. Queued units and those a Pop took are in entries; the inline unit,
// which is always older than any queued unit of its key, is kept apart.
func (q *Queue) unitOf(key string) *unit {
	if u := q.entries[key]; u != nil {
		return u
	}
	return q.inline.holding(key)
}

// admit checks an incoming object, computes its key and transforms it.
func (q *Queue) admit(obj runtime.Object) (string, runtime.Object, error) {
	if objkey.IsNil(obj) {
		return "", nil, ErrNilObject
	}
	key, err := q.keyOf(obj)
	if err != nil {
		return "", nil, err
	}
	if q.transform == nil {
		return key, obj, nil
	}
	out, err := q.transform(obj)
	if err != nil {
		return "", nil, fmt.Errorf("transform %q: %w", key, err)
	}
	if objkey.IsNil(out) {
		return "", nil, fmt.Errorf("transform %q: %w", key, ErrNilObject)
	}
	return key, out, nil
}

// deleteIsNews reports whether a delete of key tells the consumer anything:
// the key has a unit that can absorb it (the coalescing rule then decides),
// or the consumer will hold the key once everything before is applied.
func (q *Queue) deleteIsNews(key string) bool {
	if q.mergeable(key) != nil {
		return true
	}
	_, exists := q.stateOf(key)
	return exists
}

// mergeable returns the unit new deltas of key should join, or nil if they
// need a new unit at the back of the line: the key has none, its newest is
// in flight (frozen), or a relist wall stands between.
func (q *Queue) mergeable(key string) *unit {
	u := q.entries[key]
	if u == nil || u.state != queued || u.seg != q.seg {
		return nil
	}
	return u
}

// enqueue adds one delta to key's history: into the unit that holds the
// key's place, or into a new unit at the back. It returns that unit.
// Callers hold mu.
func (q *Queue) enqueue(key string, d Delta, clk *opClock) *unit {
	q.counters.Enqueued++
	if u := q.mergeable(key); u != nil {
		var absorbed bool
		u.items[0].Deltas, absorbed = appendDelta(u.items[0].Deltas, d, q.keepAllUpdates)
		if absorbed {
			q.counters.Coalesced++
		} else {
			q.deltas++
		}
		return u
	}
	u := newKeyUnit(key, d)
	q.entries[key] = u
	q.push(u, clk)
	return u
}

// push puts a new unit at the back of the line and wakes a waiting Pop.
func (q *Queue) push(u *unit, clk *opClock) {
	q.seq++
	u.seq, u.seg, u.queuedAt = q.seq, q.seg, clk.get()
	q.waiting.pushBack(u)
	q.depth += u.size()
	q.deltas += u.deltaCount()
	q.signal()
}

// signal wakes every Pop waiting for a change. Callers hold mu.
func (q *Queue) signal() {
	if q.wake != nil {
		close(q.wake)
		q.wake = nil
	}
}

// populate records the first write of data. initial is the number of units
// the first Replace created (zero for Add, Update and Delete): HasSynced
// turns true once those many have been processed. Callers hold mu.
func (q *Queue) populate(initial int) {
	if q.populated {
		return
	}
	q.populated = true
	q.initialLeft = initial
	q.checkSynced()
}

// checkSynced publishes HasSynced once the first Replace is fully processed.
func (q *Queue) checkSynced() {
	if q.populated && q.initialLeft == 0 {
		q.synced.Store(true)
	}
}

// Bookmark queues a progress marker: the server has reached rv with no
// change left to report. The consumer gets it as a Batch with no Items and
// ResourceVersion rv, after everything queued before it. Two markers with
// nothing in between become one (the newer), so a stalled consumer does not
// accumulate bookmarks.
func (q *Queue) Bookmark(rv string) error {
	if rv == "" {
		return fmt.Errorf("deltafifo: bookmark without resourceVersion: %w", ErrInvalidArgument)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return ErrClosed
	}
	q.pushMarker(rv, &opClock{})
	return nil
}

// pushMarker queues a marker for rv, or refreshes the one at the back.
func (q *Queue) pushMarker(rv string, clk *opClock) {
	if last := q.waiting.back(); last != nil && last.kind == markerUnit {
		last.body.rv = rv
		return
	}
	q.push(&unit{kind: markerUnit, body: &body{rv: rv}}, clk)
}

// Close stops the queue. Writes return ErrClosed from now on. Pop and
// PopBatch still deliver what is queued, then return ErrClosed; every Pop
// waiting on an empty queue returns at once. Close is idempotent.
func (q *Queue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.signal()
}

// HasSynced reports whether the initial state has reached the consumer:
// true once every item of the first Replace has been processed (its
// process function returned), or at once if the first write was an Add,
// Update or Delete. It never turns false again.
func (q *Queue) HasSynced() bool { return q.synced.Load() }

// Drained reports whether nothing waits in line and no batch is in flight:
// every write the queue accepted before the call has been processed (its
// process function returned). A consumer that records the last
// resourceVersion it wrote, then sees Drained, knows its cache holds
// everything up to that version (the informer's WaitFor does).
func (q *Queue) Drained() bool {
	q.mu.Lock()
	drained := q.waiting.len() == 0 && !q.popping
	q.mu.Unlock() // no defer: the informer asks after every batch it applies
	return drained
}

// Stats returns a snapshot of the backlog and counters.
func (q *Queue) Stats() Stats {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := q.counters
	s.Depth, s.Deltas = q.depth, q.deltas
	if head := q.waiting.front(); head != nil {
		s.OldestAge = time.Since(head.queuedAt)
	}
	for _, u := range q.inFlight {
		s.InFlight += u.size()
	}
	s.InFlight += q.inline.inFlight()
	return s
}

// opClock reads the clock at most once per operation, and only if
// the operation creates a unit. A Replace that queues 10,000 units stamps
// them all with one reading: clock reads are not free (about 250 ns on a
// VM whose clock source is kvm-clock).
type opClock struct {
	t    time.Time
	read bool
}

func (c *opClock) get() time.Time {
	if !c.read {
		c.t, c.read = time.Now(), true
	}
	return c.t
}
