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

// clear empties f, keeping its buffer. It zeroes only the slots in use:
// the cost is the items', not the buffer's.
func (f *fifo[T]) clear() {
	var zero T
	for i := range f.n {
		f.buf[(f.head+i)&(len(f.buf)-1)] = zero
	}
	f.head, f.n = 0, 0
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

// queued is an entry of a level: an item; the low half of its hash, which
// Get needs to find the item's state and must not compute while it holds
// the lock (see states; tables have fewer than 2^32 slots, and states
// compares those 32 bits); and its ticket, which tells the item's live entry
// from one a raise left behind (see Queue.raiseLocked). Two 32-bit halves
// keep it the size an item and a 64-bit hash were.
type queued[T comparable] struct {
	item   T
	hash   uint32
	ticket uint32
}

// levels holds one fifo per priority in use, highest priority first. A
// queue has few priorities (usually PriorityNormal and PriorityLow), so a
// short sorted slice beats a heap: push and pop are O(1) in the items and
// O(priorities) at worst.
//
// A level that empties stays, buffer and all, so that a queue that empties
// and fills again at one priority, the common case, neither allocates nor
// rebuilds anything. Empty levels are dropped when a new priority needs a
// level (one of them becomes it), and when nothing waits the entries raises
// left behind are dropped (Queue.popReadyLocked); so a queue fed many
// priorities over its life keeps no more levels than it once had priorities
// with entries at one moment, and those entries are at most one per item
// waiting plus one per raise not yet skipped.
type levels[T comparable] struct {
	byPriority []*level[T] // sorted by priority, highest first
}

func (ls *levels[T]) push(item T, h uint64, p Priority, ticket uint32) {
	l := ls.find(p)
	if l == nil {
		l = ls.add(p)
	}
	l.items.push(queued[T]{item: item, hash: uint32(h), ticket: ticket})
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

// pop returns the oldest entry of the highest priority that has one.
func (ls *levels[T]) pop() (r queued[T], ok bool) {
	for _, l := range ls.byPriority {
		if r, ok := l.items.pop(); ok {
			return r, true
		}
	}
	return r, false
}

// clear empties every level, keeping the levels and their buffers.
func (ls *levels[T]) clear() {
	for _, l := range ls.byPriority {
		l.items.clear()
	}
}
