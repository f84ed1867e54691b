package workqueue

import (
	"hash/maphash"
	"sync"
	"time"

	"github.com/seed31a95821/informer/metrics"
)

// Priority orders items that are ready at the same time: a higher priority is
// handed out first, and items of one priority go first in, first out.
type Priority int32

const (
	// PriorityNormal is the priority of Add: live events.
	PriorityNormal Priority = 0
	// PriorityLow is for work that may wait behind live events, such as the
	// adds of an informer's initial list (see informer.EnqueueKeys): after a
	// restart, a change made a second ago is handled before the thousands of
	// objects that merely exist.
	PriorityLow Priority = -100
)

// Options configure a Queue. The zero value is ready to use.
type Options[T comparable] struct {
	// RateLimiter decides how long AddRateLimited waits before an item is
	// ready again. Nil means DefaultRateLimiter: per item exponential from
	// 5ms to 1000s, and 10 requeues per second overall with bursts of 100.
	RateLimiter RateLimiter[T]
	// Name labels the queue's figures (the "name" label of workqueue_*),
	// such as the controller's name.
	Name string
	// Metrics, when set, receives the queue's figures under client-go's
	// workqueue_* names (metrics/names.go) until ShutDown. Nil means none,
	// and no cost: the queue then times nothing per item.
	Metrics *metrics.Registry
}

// Queue is a work queue of items of type T, usually "namespace/name" keys.
// It promises what a controller needs:
//
//   - An item is handed to at most one worker at a time: Get marks it as
//     processing until Done.
//   - An item added many times before a worker takes it is handed out once
//     (the dirty set deduplicates).
//   - An item added while it is being processed is handed out again after
//     Done, so the change that arrived meanwhile is not lost.
//   - Items are handed out by priority, then first in, first out: in the
//     order they were last queued, by an add while not waiting, an add at
//     a higher priority, or the Done after an add while in hand.
//
// AddAfter and AddRateLimited delay an item without a goroutine or a timer of
// its own: all delayed items share one heap and one timer.
//
// The zero value is ready to use, with the default rate limiter. A Queue is
// safe for concurrent use and must not be copied after first use.
type Queue[T comparable] struct {
	opts Options[T]

	// once sets up the zero value: mu's bed for sleepers, cond.L, seed,
	// epoch and limiter are written by it and only read afterwards. It is
	// not under mu because the seed is needed before mu is taken: Add and
	// Done hash their item first, so as to hold mu for less (see states).
	once    sync.Once
	cond    sync.Cond // signalled when an item becomes ready or processing ends; L is &mu
	seed    maphash.Seed
	epoch   time.Time // the zero of the queue's clock: monotonic, unlike wall time
	limiter RateLimiter[T]

	// The fields above are only read once set up (once and seed by every
	// Add, Get and Done), those below written by every op. Were they on
	// one cache line, each write by one CPU would cost every other CPU a
	// miss on its next read of the seed, outside the lock. 128 bytes are
	// two lines, as x86 CPUs fetch lines in pairs.
	_ [128]byte

	mu parkingLock // guards every field below

	// ready holds the items a worker may take, by priority. An entry that
	// is not its item's live one is stale and skipped: see raiseLocked.
	ready levels[T]
	// nready counts the live entries of ready.
	nready int
	// stale counts the entries of ready that raises left behind; while it
	// is zero every entry is live and Get need not check.
	stale int
	// tickets numbers the entries pushed into ready, so that an item's
	// entry knows which of them is its live one (entry.stamp). It wraps
	// after 2^32 pushes: a stale entry that stays in ready that long (the
	// queue never empties meanwhile) and meets its item's new ticket is
	// taken for the live one, and the live one is skipped in its turn. The
	// item goes out once, early; nothing is lost or handed out twice.
	tickets uint32
	// items holds every item that is dirty, processing or both, with its
	// state: one entry per item, so that Add, Get and Done each find an
	// item once, by a hash computed before mu was taken.
	items states[T]
	// nbusy counts the items of items that are processing.
	nbusy int
	// timing is set by the first call to Stats: from then on Get notes
	// when each item is handed out. Reading the clock would be a quarter
	// of an add+get+done (BenchmarkWorkqueue in bench/), for a figure most
	// queues are never asked for.
	timing bool
	// wake counts the items made ready under this hold of mu (a raise
	// makes none: its item was ready already): unlock signals that many
	// waiting workers once mu is released, so a woken worker does not go
	// straight back to sleep on mu.
	wake int
	// waiting holds the delayed items; see delay.go.
	waiting delays[T]
	// m is nil unless Options.Metrics is set; see metrics.go.
	m *instruments[T]

	shuttingDown bool
	drain        bool // ShutDownWithDrain waits for processing to empty; ShutDown clears it
	adds         uint64
	retries      uint64
}

// New returns a Queue configured by opts.
func New[T comparable](opts Options[T]) *Queue[T] {
	return &Queue[T]{opts: opts}
}

// setUp makes the zero value usable; it runs once, before any method
// touches anything else.
func (q *Queue[T]) setUp() {
	q.mu.setUp()
	q.cond.L = &q.mu
	q.seed = maphash.MakeSeed()
	q.epoch = time.Now()
	q.limiter = q.opts.RateLimiter
	if q.limiter == nil {
		q.limiter = DefaultRateLimiter[T]()
	}
	q.setUpMetrics()
}

// hash sets the queue up if need be and hashes item, for states. Callers
// hash before they lock: the lock is then held for less.
func (q *Queue[T]) hash(item T) uint64 {
	q.once.Do(q.setUp)
	return maphash.Comparable(q.seed, item)
}

// lock sets the queue up if need be and takes mu. A worker that finds mu
// held sleeps until it is released (see lock.go for why it does not spin).
func (q *Queue[T]) lock() {
	q.once.Do(q.setUp)
	q.mu.Lock()
}

// unlock releases mu, then wakes a waiting Get for each item made ready
// while it was held.
func (q *Queue[T]) unlock() {
	n := q.wake
	q.wake = 0
	q.mu.Unlock()
	for range n {
		q.cond.Signal()
	}
}

// Add marks item as needing processing, at PriorityNormal. It does nothing
// after ShutDown.
func (q *Queue[T]) Add(item T) { q.AddWithPriority(item, PriorityNormal) }

// AddWithPriority is Add at priority p. An item already waiting at a lower
// priority moves up to p; one waiting at a higher priority stays there.
func (q *Queue[T]) AddWithPriority(item T, p Priority) {
	h := q.hash(item)
	q.lock()
	defer q.unlock()
	q.addLocked(item, h, p)
}

// entry is the state of one item of Queue.items. An item is dirty (it needs
// processing), processing (a worker has it), or both (it was added while a
// worker had it); an item that is neither has no entry, which is how states
// tells an empty slot.
type entry struct {
	// stamp is, while the item waits in ready, the ticket of its live entry
	// there; while a worker has it (and the queue is timing), when the
	// worker took it, in milliseconds on the queue's clock (see
	// millisLocked). One field serves both because an item in hand has no
	// live entry in ready; 32 bits for each keep a slot of states at 32
	// bytes for string items.
	stamp    uint32
	priority Priority // the priority it waits at; while dirty
	dirty    bool
	busy     bool
}

// live reports whether the entry of ready with ticket t is the live one of
// the item whose entry is e: the item waits (dirty, not in hand) and t is
// its ticket. Any other entry was left behind by a raise.
func (e *entry) live(t uint32) bool { return e.dirty && !e.busy && e.stamp == t }

// addLocked adds item, whose hash is h, at priority p.
func (q *Queue[T]) addLocked(item T, h uint64, p Priority) {
	if q.shuttingDown {
		return
	}
	i, ok := q.items.find(item, h)
	if q.m != nil {
		q.markQueuedLocked(item)
	}
	if !ok {
		q.adds++
		e := q.items.insert(i, item, h, entry{dirty: true, priority: p})
		q.pushReadyLocked(item, h, e)
		return
	}
	e := q.items.at(i)
	if e.dirty {
		if p > e.priority {
			q.raiseLocked(item, h, e, p)
		}
		return
	}
	// Busy and clean: it goes back into ready at Done.
	q.adds++
	e.dirty, e.priority = true, p
}

// raiseLocked moves a dirty item up to priority p. Removing it from its old
// fifo would cost a search; instead the item is pushed again at p with a new
// ticket, and the old entry, whose ticket is no longer the item's, is stale:
// popReadyLocked skips it. Each raise leaves at most one stale entry.
func (q *Queue[T]) raiseLocked(item T, h uint64, e *entry, p Priority) {
	e.priority = p
	if e.busy {
		return
	}
	q.pushLocked(item, h, e)
	q.stale++
}

// pushReadyLocked queues item, whose entry is e, at e.priority.
func (q *Queue[T]) pushReadyLocked(item T, h uint64, e *entry) {
	q.pushLocked(item, h, e)
	q.nready++
	q.wake++
}

// pushLocked puts a new entry of item into ready at e.priority and makes it
// the item's live one.
func (q *Queue[T]) pushLocked(item T, h uint64, e *entry) {
	q.tickets++
	e.stamp = q.tickets
	q.ready.push(item, h, e.priority, q.tickets)
}

// popReadyLocked takes the next live entry of ready, and returns its item
// and the item's entry. A live entry is dirty and not busy.
func (q *Queue[T]) popReadyLocked() (T, *entry, bool) {
	for {
		r, ok := q.ready.pop()
		if !ok {
			return r.item, nil, false
		}
		i, ok := q.items.find(r.item, uint64(r.hash))
		// Stale: the item was raised, or handed out from its raised entry
		// (and perhaps added again since, at any priority, or Done since, so
		// it has no state). While there is no stale entry, every entry is
		// its item's live one.
		if q.stale > 0 && (!ok || !q.items.at(i).live(r.ticket)) {
			q.stale--
			continue
		}
		q.nready--
		if q.nready == 0 && q.stale > 0 {
			// Nothing waits: every entry left is stale. Dropping them now
			// keeps the levels they hold from outliving their use.
			q.ready.clear()
			q.stale = 0
		}
		return r.item, q.items.at(i), true
	}
}

// Get blocks until an item is ready, marks it as processing and returns it.
// The caller must call Done(item) when it has finished with it. After
// ShutDown, Get still hands out the items that were ready, and then returns
// shutdown == true with the zero T.
func (q *Queue[T]) Get() (item T, shutdown bool) {
	q.lock()
	defer q.unlock()
	for q.nready == 0 && !q.shuttingDown {
		q.cond.Wait()
	}
	item, e, ok := q.popReadyLocked()
	if !ok {
		return item, true
	}
	// A live entry of ready is dirty and not busy: it becomes busy and
	// clean, with nothing else to keep.
	*e = entry{busy: true}
	q.nbusy++
	if q.timing || q.m != nil {
		now := q.nowLocked() // one clock read for both: it is most of their cost
		if q.timing {
			e.stamp = millis(now)
		}
		if q.m != nil {
			q.markGotLocked(item, now)
		}
	}
	return item, false
}

// Done marks item as processed. If it was added again while being
// processed, it is ready again now.
func (q *Queue[T]) Done(item T) {
	h := q.hash(item)
	q.lock()
	defer q.unlock()
	i, ok := q.items.find(item, h)
	if !ok || !q.items.at(i).busy {
		return // not in hand: nothing to do
	}
	q.nbusy--
	if q.m != nil {
		q.markDoneLocked(item)
	}
	if e := q.items.at(i); e.dirty {
		*e = entry{dirty: true, priority: e.priority}
		q.pushReadyLocked(item, h, e)
	} else {
		q.items.remove(i)
	}
	if q.nbusy == 0 && q.drain {
		q.cond.Broadcast() // ShutDownWithDrain waits for this
	}
}

// Len is the number of items ready to be handed out. Delayed items and
// items being processed do not count.
func (q *Queue[T]) Len() int {
	q.lock()
	defer q.unlock()
	return q.nready
}

// ShutDown makes the queue refuse new items and drop its delayed ones. Get
// goes on handing out the items already ready, then reports shutdown to
// every worker. It does not wait, and it ends the wait of any
// ShutDownWithDrain: a caller that says "stop now" overrules one that said
// "stop when the work in hand is done".
func (q *Queue[T]) ShutDown() {
	q.lock()
	defer q.unlock()
	q.drain = false
	q.shutDownLocked()
}

// ShutDownWithDrain is ShutDown, and then waits until every item handed out
// is Done: a controller's way to stop without cutting a write in half. The
// workers must keep calling Get and Done meanwhile, or it waits until a
// ShutDown ends the wait.
func (q *Queue[T]) ShutDownWithDrain() {
	q.lock()
	defer q.unlock()
	q.drain = true
	q.shutDownLocked()
	for q.drain && q.nbusy > 0 {
		q.cond.Wait()
	}
}

func (q *Queue[T]) shutDownLocked() {
	q.shuttingDown = true
	q.waiting.stop()
	q.stopMetricsLocked()
	q.cond.Broadcast()
}

// ShuttingDown reports whether ShutDown has been called.
func (q *Queue[T]) ShuttingDown() bool {
	q.lock()
	defer q.unlock()
	return q.shuttingDown
}

// nowLocked reads the queue's clock: nanoseconds since the queue was set
// up, from the monotonic clock, so a change of wall time cannot make a
// duration negative.
func (q *Queue[T]) nowLocked() int64 { return int64(time.Since(q.epoch)) }

// millisLocked is the queue's clock in milliseconds, modulo 2^32: the time
// an item in hand keeps in its entry. A difference of two readings is right
// for any item held less than 49 days, however long the queue has run.
func (q *Queue[T]) millisLocked() uint32 { return millis(q.nowLocked()) }

// millis converts a reading of nowLocked to millisLocked's.
func millis(now int64) uint32 { return uint32(now / int64(time.Millisecond)) }
