package workqueue

import "slices"

// fifo is a first-in, first-out ring. It grows by doubling and
// never shrinks below what it once needed, so a queue that is filled and
// drained again and again allocates nothing after the first rounds.
// It is not safe for concurrent use; the Queue's mutex guards it.
type fifo[T any] struct {
	buf  []T // len(buf) is zero or a power of two
	head int // index of the oldest item
	n    int // number of items
}

func (f *fifo[T]) push(item T) {
	if f.n == len(f.buf) {
		f.grow()
	}
	f.buf[(f.head+f.n)&(len(f.buf)-1)] = item
	f.n++
}

// pop removes and returns the oldest item; ok is false when f is empty.
func (f *fifo[T]) pop() (item T, ok bool) {
	if f.n == 0 {
		return item, false
	}
	var zero T
	item, f.buf[f.head] = f.buf[f.head], zero // let the garbage collector have it
	f.head = (f.head + 1) & (len(f.buf) - 1)
	f.n--
	return item, true
}

func (f *fifo[T]) grow() {
	size := max(16, 2*len(f.buf))
	buf := make([]T, size)
	for i := range f.n {
		buf[i] = f.buf[(f.head+i)&(len(f.buf)-1)]
	}
	f.buf, f.head = buf, 0
}

// level is the fifo of one priority.
type level[T comparable] struct {
	priority Priority
	items    fifo[queued[T]]
}

// queued is an entry of a level: an item and its hash, which Get needs to
// find the item's state and must not compute while it holds the lock (see
// states).
type queued[T comparable] struct {
	item T
	hash uint64
}

// levels holds one fifo per priority in use, highest priority first. A
// queue has few priorities (usually PriorityNormal and PriorityLow), so a
// short sorted slice beats a heap: push and pop are O(1) in the items and
// O(priorities) at worst.
//
// A level that empties stays, buffer and all, so that a queue that empties
// and fills again at one priority, the common case, neither allocates nor
// rebuilds anything. Empty levels are dropped when a new priority needs a
// level (one of them becomes it), so a queue fed many priorities over its
// life keeps no more levels than it once had priorities waiting at one
// moment.
type levels[T comparable] struct {
	byPriority []*level[T] // sorted by priority, highest first
}

func (ls *levels[T]) push(item T, h uint64, p Priority) {
	l := ls.find(p)
	if l == nil {
		l = ls.add(p)
	}
	l.items.push(queued[T]{item: item, hash: h})
}

// find returns the level of priority p, or nil.
func (ls *levels[T]) find(p Priority) *level[T] {
	for _, l := range ls.byPriority {
		if l.priority == p {
			return l
		}
		if l.priority < p {
			break
		}
	}
	return nil
}

// add drops the empty levels, makes a level for p (from one of them, if
// there was one) and returns it.
func (ls *levels[T]) add(p Priority) *level[T] {
	var l *level[T]
	kept := ls.byPriority[:0]
	for _, old := range ls.byPriority {
		switch {
		case old.items.n > 0:
			kept = append(kept, old)
		case l == nil:
			l = old
		}
	}
	clear(ls.byPriority[len(kept):])
	if l == nil {
		l = new(level[T])
	}
	l.priority = p
	i := 0
	for i < len(kept) && kept[i].priority > p {
		i++
	}
	ls.byPriority = slices.Insert(kept, i, l)
	return l
}

// pop returns the oldest item of the highest priority that has one, its
// hash, and the priority it was queued at.
func (ls *levels[T]) pop() (r queued[T], p Priority, ok bool) {
	for _, l := range ls.byPriority {
		if r, ok := l.items.pop(); ok {
			return r, l.priority, true
		}
	}
	return r, 0, false
}
