package share

// The doorkeeper: a string is given an entry in the table only when it is
// met a second time. Most strings of a cache repeat (namespaces, images,
// label values), and their twins arrive soon; some never do: a write time
// stamped into each pod's annotations is met once, by the one pod that
// holds it, and an entry for it (and the string, held by the entry after
// the pod has moved on to the next one) is bookkeeping that shares
// nothing. After two random-order churns of 10k pods that was 20,000 of
// the strings table's 30,000 entries (BenchmarkChurnHeap). Delete this
// file, Table.door and its one call in Table.str, and the table is still
// correct, only larger after a churn.
//
// The price is one copy of each repeated string: the first object that
// holds it keeps its own, the second gives the table its copy. A string
// is small, so that costs less than the entries of the strings met once
// (compare -heap's synced rows did not move). Maps and slices have no
// doorkeeper: the first pod of every template would then keep its own
// containers, labels and managedFields, kilobytes a template.

import "hash/maphash"

const (
	// The doorkeeper's bits, fewest and most: it starts small, for the
	// many informers that cache a few objects, and doubles up to a
	// bound on what it may cost beside the table's budget (budget/64).
	minDoorBits = 1 << 12
	// It is cleared, and doubled while under that bound, when one bit in
	// doorFill is set: a string met once is then let in at its first
	// meeting one time in doorFill at most (a false positive: an entry,
	// no harm).
	doorFill = 8
)

// doorkeeper remembers which strings were met once since it was last
// cleared, as one bit each under a hash of the string: a bitset, not a
// list, so that it holds no string and its memory is bounded. The zero
// value is ready to use.
type doorkeeper struct {
	bits []uint64
	set  int // bits set since the last clear
}

// seen reports whether h was met before, and marks it met. maxBits
// bounds the bits kept.
func (d *doorkeeper) seen(h uint64, maxBits int) bool {
	if d.bits == nil {
		d.bits = make([]uint64, minDoorBits/64)
	}
	n := uint64(len(d.bits) * 64) // a power of two
	i := h & (n - 1)
	w, m := i/64, uint64(1)<<(i%64)
	if d.bits[w]&m != 0 {
		return true
	}
	d.bits[w] |= m
	d.set++
	if d.set*doorFill > int(n) {
		if 2*int(n) <= maxBits {
			d.bits = make([]uint64, 2*len(d.bits))
		} else {
			clear(d.bits)
		}
		d.set = 0
	}
	return false
}

// admits reports whether the table should keep s: when s was met before.
// Callers hold mu.
func (t *Table) admits(s string) bool {
	return t.door.seen(maphash.String(t.seed, s), max(minDoorBits, t.budget()/64*8))
}
