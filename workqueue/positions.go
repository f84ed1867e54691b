package workqueue

import "hash/maphash"

// positions is the index of delays: for each waiting item, its position in
// the heap. It does what a map[T]int would, in a tenth of the memory. A Go
// map would keep each key a second time (16 bytes for a string) next to its
// position, in tables that are only partly full: about 38 bytes per waiting
// item, more than the heap itself. positions keeps no keys at all: a slot
// holds a heap position, and the key is the item found there. A slot is 4
// bytes, and a table is rebuilt between a quarter and half full, so an item
// costs 8 to 16 bytes (BenchmarkWorkqueueAddAfter in bench/ measures it).
//
// It is a textbook open-addressing table with linear probing: an item's
// hash picks a slot, and the item is in the first slot from there on whose
// position holds it, before the first empty slot. A removed item leaves a
// tombstone, so that the items after it stay reachable; tombstones are
// swept when the table is rebuilt. It is not safe for concurrent use; the
// Queue's mutex guards it.
type positions[T comparable] struct {
	seed  maphash.Seed
	slots []int32 // empty, tombstone, or a heap position + 1; len is zero or a power of two
	live  int     // slots holding a position
	used  int     // slots holding a position or a tombstone
}

const (
	emptySlot     int32 = 0
	tombstoneSlot int32 = -1
)

// find returns the heap position of item, if it is there.
func (p *positions[T]) find(heap []delayed[T], item T) (pos int, ok bool) {
	if p.live == 0 {
		return 0, false
	}
	mask := len(p.slots) - 1
	for i := p.home(item); ; i = (i + 1) & mask {
		switch s := p.slots[i]; {
		case s == emptySlot:
			return 0, false
		case s > 0 && heap[s-1].item == item:
			return int(s - 1), true
		}
	}
}

// insert records that item, which is not in the table, is at pos, the
// last position of heap. A table three quarters used is rebuilt first.
func (p *positions[T]) insert(heap []delayed[T], item T, pos int) {
	if 4*(p.used+1) > 3*len(p.slots) {
		p.rebuild(heap[:pos])
	}
	mask := len(p.slots) - 1
	i := p.home(item)
	for p.slots[i] > 0 {
		i = (i + 1) & mask
	}
	if p.slots[i] == emptySlot {
		p.used++
	}
	p.slots[i] = int32(pos + 1)
	p.live++
}

// slot returns the index of the slot that holds pos, the position of item.
func (p *positions[T]) slot(item T, pos int) int {
	mask := len(p.slots) - 1
	i := p.home(item)
	for p.slots[i] != int32(pos+1) {
		i = (i + 1) & mask
	}
	return i
}

// swap records that the items at heap positions i and j, a and b, have
// traded places. Both slots are found before either is written: while one
// is rewritten, two slots would hold the same position.
func (p *positions[T]) swap(a T, i int, b T, j int) {
	sa, sb := p.slot(a, i), p.slot(b, j)
	p.slots[sa], p.slots[sb] = int32(j+1), int32(i+1)
}

// remove forgets item, which is at pos.
func (p *positions[T]) remove(item T, pos int) {
	p.slots[p.slot(item, pos)] = tombstoneSlot
	p.live--
	if p.live == 0 {
		p.slots, p.used = nil, 0 // the burst is over: give the table back
	}
}

// rebuild indexes every item of heap into a fresh table, between two and
// four times as big as the items (and one more) need, which sweeps the
// tombstones.
func (p *positions[T]) rebuild(heap []delayed[T]) {
	if len(p.slots) == 0 {
		p.seed = maphash.MakeSeed()
	}
	size := 16
	for 4*(len(heap)+1) > 2*size {
		size *= 2
	}
	p.slots, p.live, p.used = make([]int32, size), 0, 0
	mask := size - 1
	for pos, d := range heap {
		i := p.home(d.item)
		for p.slots[i] != emptySlot {
			i = (i + 1) & mask
		}
		p.slots[i] = int32(pos + 1)
		p.live++
		p.used++
	}
}

// home is the slot where the probe for item starts.
func (p *positions[T]) home(item T) int {
	return int(maphash.Comparable(p.seed, item) & uint64(len(p.slots)-1))
}
