package share

import (
	"hash/maphash"
	"sync"
	"unsafe"
	"weak"
)

const (
	// DefaultBudget is what a Table may keep when its Budget is zero: the
	// bytes of the values it holds, estimated, and its own bookkeeping
	// (doc.go, "Bounded").
	DefaultBudget = 64 << 20

	// StringsBudget is the budget of a table that only interns strings,
	// as reflector/wire's decoders do.
	StringsBudget = 16 << 20

	maxString = 256      // longer strings are rarely repeated: never kept
	maxValue  = 64 << 10 // the largest map, slice or byte slice kept
	maxHits   = 255      // hits saturate here

	// The bookkeeping of one entry, charged with its content: a map slot
	// (key, value and control byte, at 7/8 load), and for a value's
	// rendering (valueEntry.typ's rawKept) its slot in raws.
	stringOverhead = 40
	valueOverhead  = 32
	rawOverhead    = 40

	// An entry's cost is kept in units of costUnit bytes, in 16 bits: no
	// value costs more than maxCost, which fits.
	costUnit = 8
	maxCost  = 4 * maxValue
)

// Table holds one copy of each value it meets, by content, within a budget
// in bytes. It is safe for concurrent use. The zero value is ready to use,
// with DefaultBudget. A nil *Table shares nothing.
type Table struct {
	// Budget is the most the table keeps, in bytes (DefaultBudget when
	// zero). Set it before first use.
	Budget int

	mu    sync.Mutex             // guards everything below; held for one whole object
	seed  maphash.Seed           // set on first use
	strs  map[string]stringEntry // kept strings by content
	vals  map[uint64]valueEntry  // kept values by the hash of their content
	raws  map[uint64][]byte      // the renderings of some of vals (valueEntry.typ's rawKept)
	door  doorkeeper             // the strings met once (doorkeeper.go)
	used  int                    // bytes charged for strs and vals
	key   []byte                 // scratch: the rendering being looked up
	other []byte                 // scratch: a kept value's rendering, to compare
}

// stringEntry is one kept string: Go's map gives back a value, not the
// key it holds, so the bytes of the copy to share are kept in the value
// too (the key's length is theirs).
type stringEntry struct {
	p    *byte
	hits uint8
}

// valueEntry is one kept map, slice or byte slice, held weakly (weak.go).
// It takes 16 bytes: after a churn of 10k pods the table holds some
// 35,000 entries, each in a map slot with its key (docs/perf-log.md,
// "After a churn: the table's own maps").
type valueEntry struct {
	p    weak.Pointer[byte] // the value's allocation
	n    uint32             // a slice's length: at most maxValue elements
	cost uint16             // costUnits charged to the budget, its rendering's included
	// typ is the typeID of the value's type, with rawKept set once raws
	// keeps the value's rendering (render): FindPart found the value by
	// those bytes, and finds it again by comparing them, not by rendering
	// the value or looking its entries up (parts.go, "Found by its
	// bytes"). Never set for byte slices and maps of other types.
	typ  uint8
	hits uint8
}

// rawKept is the bit of valueEntry.typ that says raws holds the entry's
// rendering.
const rawKept = 0x80

// costUnits is cost bytes in costUnit, rounded up.
func costUnits(cost int) uint16 { return uint16((cost + costUnit - 1) / costUnit) }

// Stats is what a Table holds: entries and the bytes charged to its budget.
type Stats struct {
	Strings, Values, Bytes int
}

// Stats returns what t holds now.
func (t *Table) Stats() Stats {
	if t == nil {
		return Stats{}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return Stats{Strings: len(t.strs), Values: len(t.vals), Bytes: t.used}
}

// lock takes mu and makes the table ready on first use.
func (t *Table) lock() {
	t.mu.Lock()
	if t.strs == nil {
		t.seed = maphash.MakeSeed()
		t.strs = make(map[string]stringEntry)
		t.vals = make(map[uint64]valueEntry)
		t.raws = make(map[uint64][]byte)
	}
}

func (t *Table) budget() int {
	if t.Budget > 0 {
		return t.Budget
	}
	return DefaultBudget
}

// str returns the kept string equal to s, or keeps s. Callers hold mu.
func (t *Table) str(s string) string {
	if len(s) == 0 || len(s) > maxString {
		return s
	}
	if e, ok := t.strs[s]; ok {
		kept := unsafe.String(e.p, len(s))
		// No write once the count saturates: this runs for every string
		// of every decoded object. The write gives the key too, which
		// the map stores again: the kept copy, not s, which only the
		// map would then hold.
		if e.hits < maxHits {
			e.hits++
			t.strs[kept] = e
		}
		return kept
	}
	if len(s)+stringOverhead > t.budget()/8 || !t.admits(s) {
		return s
	}
	t.makeRoom(len(s) + stringOverhead)
	t.strs[s] = stringEntry{p: unsafe.StringData(s), hits: 1}
	return s
}

// StringOf returns the kept string whose bytes are b, or keeps a copy of
// b and returns it: what Strings does to a string, for a decoder that has
// not made the string yet, so that a string the table keeps costs it no
// allocation. A nil table returns a copy of b.
func (t *Table) StringOf(b []byte) string {
	if t == nil || len(b) == 0 || len(b) > maxString {
		return string(b)
	}
	t.lock()
	defer t.mu.Unlock()
	if e, ok := t.strs[string(b)]; ok { // no allocation: a lookup by bytes
		kept := unsafe.String(e.p, len(b))
		if e.hits < maxHits {
			e.hits++
			t.strs[kept] = e
		}
		return kept
	}
	return t.str(string(b))
}

// find returns the kept value whose content hashes to h and that equal
// finds equal to v, or keeps v, charged cost bytes. Another value that
// hashes to h keeps its place: v is then returned as it is. A kept value
// that nobody holds any more gives its place to v. Callers hold mu.
func find[V any, H holder[V]](t *Table, h uint64, v V, cost int, equal func(kept V) bool) V {
	if e, ok := t.vals[h]; ok {
		if kept, ok := get[V, H](e); ok {
			if !equal(kept) {
				return v
			}
			if e.hits < maxHits {
				e.hits++
				t.vals[h] = e
			}
			return kept
		}
		if e.alive() {
			return v // a value of another type
		}
		t.drop(h, e)
	}
	cost += valueOverhead
	if cost > maxCost || cost > t.budget()/8 {
		return v
	}
	e := holdWeakly[V, H](v)
	e.cost = costUnits(cost)
	t.makeRoom(int(e.cost) * costUnit)
	t.vals[h] = e
	return v
}

// drop forgets e, the entry under h. Callers hold mu.
func (t *Table) drop(h uint64, e valueEntry) {
	delete(t.vals, h)
	if e.typ&rawKept != 0 {
		delete(t.raws, h)
	}
	t.used -= int(e.cost) * costUnit
}

// makeRoom charges cost bytes and, when that passes the budget, ages the
// table until it is back under three quarters of it. Each pass halves
// every entry's hits and forgets the entries it finds at zero: a value met
// once (it starts at one) is forgotten at the second pass after it
// arrived, unless it is met again, which leaves a quarter of the budget
// of other arrivals for its twin to come; a value met many times, as the
// values many cached objects hold are, outlives as many halvings. Nine
// passes empty any table (hits saturate at 255), so the loop is bounded.
// Callers hold mu.
func (t *Table) makeRoom(cost int) {
	t.used += cost
	if t.used <= t.budget() {
		return
	}
	low := t.budget() / 4 * 3
	for pass := 0; t.used > low && pass < 9; pass++ {
		t.age()
	}
}

// age is one pass of makeRoom over every entry.
func (t *Table) age() {
	for k, e := range t.strs {
		if e.hits == 0 {
			delete(t.strs, k)
			t.used -= len(k) + stringOverhead
			continue
		}
		e.hits /= 2
		t.strs[k] = e
	}
	for k, e := range t.vals {
		if e.hits == 0 || !e.alive() {
			t.drop(k, e)
			continue
		}
		e.hits /= 2
		t.vals[k] = e
	}
}
