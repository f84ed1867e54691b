package workqueue

import (
	"math"
	"time"
)

// delays holds the items of AddAfter until they are due: a min-heap by due
// time, an index from item to heap position (so an item is never held
// twice; see positions.go), and one timer for the earliest. There is no
// goroutine per item and none of the queue's own: the timer's function runs
// only when an item falls due. It is not safe for concurrent use; the
// Queue's mutex guards it.
type delays[T comparable] struct {
	heap    []delayed[T]
	index   positions[T] // position in heap of every waiting item
	timer   *time.Timer
	armed   int64 // the due time the timer is set for, while pending
	pending bool  // the timer is set and fire has not run since
}

// delayed is one waiting item and when it is due, on the queue's clock.
type delayed[T comparable] struct {
	item T
	due  int64
}

// AddAfter adds item once d has passed. An item already waiting keeps the
// earlier of its two due times: there is never more than one pending add of
// an item. A d of zero or less adds at once; one so long that its due time
// would pass the end of the queue's clock (math.MaxInt64, which a token
// bucket with no tokens returns) waits until that end, in effect forever,
// without delaying the other items.
func (q *Queue[T]) AddAfter(item T, d time.Duration) {
	if d <= 0 {
		q.Add(item) // hashed before the lock is taken, as every Add is
		return
	}
	q.lock()
	defer q.unlock()
	q.addAfterLocked(item, d)
}

func (q *Queue[T]) addAfterLocked(item T, d time.Duration) {
	if q.shuttingDown {
		return
	}
	if d <= 0 {
		q.addLocked(item, q.hash(item), PriorityNormal)
		return
	}
	if q.waiting.schedule(item, dueAt(q.nowLocked(), d)) {
		q.armLocked()
	}
}

// dueAt is now+d, clamped to the end of the clock. Left to overflow, a huge
// d would wrap to a due time in the past: the item would sit at the top of
// the heap with the one timer set for "never", and every item behind it,
// retries included, would wait forever too.
func dueAt(now int64, d time.Duration) int64 {
	if int64(d) > math.MaxInt64-now {
		return math.MaxInt64
	}
	return now + int64(d)
}

// AddRateLimited adds item after the delay the rate limiter gives it: the
// way a worker retries an item that failed.
func (q *Queue[T]) AddRateLimited(item T) {
	q.lock()
	defer q.unlock()
	if q.shuttingDown {
		return
	}
	q.retries++
	q.addAfterLocked(item, q.limiter.When(item))
}

// Forget tells the rate limiter that item succeeded: its next failure starts
// again from the shortest delay. It does not remove the item from the queue.
func (q *Queue[T]) Forget(item T) {
	q.lock()
	defer q.unlock()
	q.limiter.Forget(item)
}

// NumRequeues is how many times item has failed since its last Forget.
func (q *Queue[T]) NumRequeues(item T) int {
	q.lock()
	defer q.unlock()
	return q.limiter.NumRequeues(item)
}

// armLocked sets the one timer for the earliest due time, unless it is set
// for that time already.
func (q *Queue[T]) armLocked() {
	w := &q.waiting
	if len(w.heap) == 0 {
		return
	}
	due := w.heap[0].due
	if w.pending && w.armed == due {
		return
	}
	wait := time.Duration(due - q.nowLocked())
	if w.timer == nil {
		w.timer = time.AfterFunc(wait, q.fire)
	} else {
		// Reset on a timer that is about to fire calls fire twice; the
		// second call finds nothing due and only sets the timer again.
		w.timer.Reset(wait)
	}
	w.armed, w.pending = due, true
}

// fireBatchSize is how many due items fire moves per hold of the lock. A
// hundred thousand items due at once would otherwise keep every worker
// waiting while each is hashed and added; in batches, workers take the
// first items while later ones are still being moved.
const fireBatchSize = 256

// fire runs on the timer's goroutine: it moves every due item to the ready
// fifo, a batch per hold of the lock, and sets the timer for the next one.
func (q *Queue[T]) fire() {
	for q.fireSome() {
	}
}

// fireSome moves up to fireBatchSize due items, and reports whether more
// may be due. When none are, it sets the timer for the next due time.
func (q *Queue[T]) fireSome() (more bool) {
	q.lock()
	defer q.unlock()
	q.waiting.pending = false
	if q.shuttingDown {
		return false
	}
	now := q.nowLocked()
	for range fireBatchSize {
		if len(q.waiting.heap) == 0 || q.waiting.heap[0].due > now {
			q.armLocked()
			return false
		}
		item := q.waiting.popMin()
		q.addLocked(item, q.hash(item), PriorityNormal)
	}
	return true
}

// schedule records item as due at due, keeping the earlier time if it is
// already waiting. It reports whether the earliest due time changed, so that
// the timer must be set again.
func (w *delays[T]) schedule(item T, due int64) bool {
	if i, ok := w.index.find(w.heap, item); ok {
		if due >= w.heap[i].due {
			return false
		}
		w.heap[i].due = due
		return w.up(i) == 0
	}
	w.heap = append(w.heap, delayed[T]{item: item, due: due})
	i := len(w.heap) - 1
	w.index.insert(w.heap, item, i)
	return w.up(i) == 0
}

func (w *delays[T]) popMin() T {
	top := w.heap[0].item
	last := len(w.heap) - 1
	w.swap(0, last)
	w.index.remove(top, last)
	w.heap[last] = delayed[T]{}
	w.heap = w.heap[:last]
	if last > 0 {
		w.down(0)
	}
	return top
}

// up moves the item at i towards the root until its parent is due no
// later, and returns where it stops.
func (w *delays[T]) up(i int) int {
	for i > 0 {
		parent := (i - 1) / 2
		if w.heap[parent].due <= w.heap[i].due {
			return i
		}
		w.swap(i, parent)
		i = parent
	}
	return i
}

func (w *delays[T]) down(i int) {
	n := len(w.heap)
	for {
		least := i
		if l := 2*i + 1; l < n && w.heap[l].due < w.heap[least].due {
			least = l
		}
		if r := 2*i + 2; r < n && w.heap[r].due < w.heap[least].due {
			least = r
		}
		if least == i {
			return
		}
		w.swap(i, least)
		i = least
	}
}

func (w *delays[T]) swap(i, j int) {
	if i == j {
		return
	}
	w.index.swap(w.heap[i].item, i, w.heap[j].item, j)
	w.heap[i], w.heap[j] = w.heap[j], w.heap[i]
}

// stop drops every waiting item and stops the timer (ShutDown).
func (w *delays[T]) stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
	w.heap, w.index = nil, positions[T]{}
}

// len is the number of waiting items.
func (w *delays[T]) len() int { return len(w.heap) }
