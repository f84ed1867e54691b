package workqueue

import "iter"

// states is Queue.items: the entry of every item that is dirty, processing
// or both. It does what a map[T]entry would, with one difference that
// matters when many workers share a queue: the caller hashes the item
// before it takes the queue's lock and passes the hash in, so the lock is
// held for a probe and a compare, never for hashing a key; and Get hashes
// nothing, as the ready fifo keeps the 32 bits of hash the table uses next
// to each item. With a Go map, hashing was most of the time an Add, Get and
// Done held the lock, and the time the lock is held is what 8 or 64
// workers queue up behind (BenchmarkWorkqueue in bench/).
//
// It is a textbook open-addressing table with linear probing: an item's
// hash picks a slot, and the item is in the first slot from there on that
// holds it, before the first empty slot. A slot is empty when its entry is
// neither dirty nor busy (an item that is neither has no entry). Removing
// an item shifts the entries after it back into the gap instead of leaving
// a tombstone, so a table churned by adds and Dones never fills up with
// dead slots. It is not safe for concurrent use; the Queue's mutex guards it.
type states[T comparable] struct {
	slots []state[T] // len is zero or a power of two
	live  int        // slots in use
}

// state is one slot of states: an item, the low 32 bits of its hash and
// its entry. Those bits are all the table uses: they pick the home slot of
// any table under 2^32 slots, and they are what the ready fifo keeps.
type state[T comparable] struct {
	item T
	hash uint32
	entry
}

func (s *state[T]) used() bool { return s.dirty || s.busy }

// find returns the slot of item, whose hash is h. If item is not there, ok
// is false and i is the empty slot where insert would put it.
func (t *states[T]) find(item T, h uint64) (i int, ok bool) {
	if len(t.slots) == 0 {
		return 0, false
	}
	mask := len(t.slots) - 1
	for i = int(uint32(h)) & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if !s.used() {
			return i, false
		}
		if s.hash == uint32(h) && s.item == item {
			return i, true
		}
	}
}

// at is the entry in slot i, as find returned it; it stays valid until the
// next insert or remove.
func (t *states[T]) at(i int) *entry { return &t.slots[i].entry }

// insert puts item, which find did not find, with hash h and entry e (dirty
// or busy) into slot i, the one find returned, and returns the entry where
// it now is. A table three quarters full doubles first.
func (t *states[T]) insert(i int, item T, h uint64, e entry) *entry {
	if 4*(t.live+1) > 3*len(t.slots) {
		t.resize(max(16, 2*len(t.slots)))
		i, _ = t.find(item, h)
	}
	// Field by field: a composite literal is built on the stack and then
	// copied out with loads wider than the stores that built it, which
	// stalls the CPU on every add.
	s := &t.slots[i]
	s.item, s.hash, s.entry = item, uint32(h), e
	t.live++
	return &s.entry
}

// remove empties slot i, then moves back into the gap every entry after it,
// up to the next empty slot, that may sit there: one whose home slot is not
// between the gap and where it is now. Every item then stays reachable from
// its home without a tombstone.
func (t *states[T]) remove(i int) {
	mask := len(t.slots) - 1
	for j := (i + 1) & mask; t.slots[j].used(); j = (j + 1) & mask {
		home := int(t.slots[j].hash) & mask
		if (j-home)&mask >= (j-i)&mask { // home is not in (i, j]
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = state[T]{}
	t.live--
	if len(t.slots) > shrinkAbove && 16*t.live < len(t.slots) {
		t.resize(sizeFor(t.live)) // a burst is over: give most of it back
	}
}

// shrinkAbove is the size of table that remove never shrinks. A small table
// costs little, and a queue whose items come and go (a few per worker) would
// otherwise grow and shrink it again and again, allocating each time.
const shrinkAbove = 1024

// resize moves every entry into a table of size slots.
func (t *states[T]) resize(size int) {
	old := t.slots
	t.slots = make([]state[T], size)
	mask := size - 1
	for k := range old {
		if !old[k].used() {
			continue
		}
		i := int(old[k].hash) & mask
		for t.slots[i].used() {
			i = (i + 1) & mask
		}
		t.slots[i] = old[k]
	}
}

// sizeFor is the size a table shrinks to for n items: a power of two, at
// least 16, that n fill at most a quarter of, so that it grows or shrinks
// again only once the number of items has changed severalfold.
func sizeFor(n int) int {
	size := 16
	for 4*n > size {
		size *= 2
	}
	return size
}

// all yields every item with its entry, for Stats. The caller may change
// an entry but must not insert or remove while it ranges.
func (t *states[T]) all() iter.Seq2[T, *entry] {
	return func(yield func(T, *entry) bool) {
		for k := range t.slots {
			if s := &t.slots[k]; s.used() && !yield(s.item, &s.entry) {
				return
			}
		}
	}
}
