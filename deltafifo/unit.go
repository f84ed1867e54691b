package deltafifo

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime"
)

// A unit is one thing waiting in the queue's line: a key's history, a whole
// relist, or a progress marker. Units are delivered strictly in line order;
// what makes the queue more than a plain FIFO is that a key's new deltas
// join the unit already holding its place instead of queueing again.
type unit struct {
	kind  unitKind
	state unitState
	// initial marks units of the first Replace; HasSynced waits for them.
	initial bool
	// seg is the barrier generation the unit was created in. Deltas join an
	// existing unit only within the same generation: a relist is a wall
	// that later deltas must not jump over (see Queue.seg).
	seg uint32
	// seq numbers units in creation order; stateOf compares it with the
	// pending relist's to tell "queued after the relist" from "before".
	seq      uint64
	queuedAt time.Time

	// keyUnit: the key's history. items has length 1 so that a Batch can
	// point at it without allocating; first backs the first delta for the
	// same reason (most keys have exactly one delta when popped).
	items [1]Item
	first [1]Delta

	// relistUnit and markerUnit only. Kept behind a pointer so that key
	// units, by far the most numerous, stay small (136 bytes).
	body *body
}

type unitKind uint8

const (
	keyUnit    unitKind = iota // one key's deltas
	relistUnit                 // a whole Replace (AtomicRelist mode)
	markerUnit                 // a resourceVersion, no data
)

type unitState uint8

const (
	queued   unitState = iota // waiting in line; may absorb new deltas
	inFlight                  // handed to process; frozen
)

// body is what a relist or marker unit carries.
type body struct {
	rv string // the version reached once the unit is applied
	// The rest is for relist units only.
	items []Item // tombstones first, then the listed objects
	// index maps each listed key to its position among the listed items,
	// which start at items[listedFrom]. Once this relist is applied, the
	// consumer holds exactly the listed objects.
	index      map[string]int
	listedFrom int
}

// lookup returns the listed object of key, or false if key is not listed.
func (b *body) lookup(key string) (runtime.Object, bool) {
	i, ok := b.index[key]
	if !ok {
		return nil, false
	}
	return b.items[b.listedFrom+i].Deltas[0].Object, true
}

// newKeyUnit returns a key unit holding one delta.
func newKeyUnit(key string, d Delta) *unit {
	u := new(unit)
	u.initKey(key, d)
	return u
}

// initKey makes u, new or reused, a key unit holding one delta.
func (u *unit) initKey(key string, d Delta) {
	*u = unit{kind: keyUnit}
	u.first[0] = d
	u.items[0] = Item{Key: key, Deltas: u.first[:1:1]}
}

// size is how many Items the unit delivers (Stats.Depth counts these).
func (u *unit) size() int {
	switch u.kind {
	case keyUnit:
		return 1
	case relistUnit:
		return len(u.body.items)
	}
	return 0
}

// deltaCount is how many deltas the unit delivers (Stats.Deltas).
func (u *unit) deltaCount() int {
	switch u.kind {
	case keyUnit:
		return len(u.items[0].Deltas)
	case relistUnit:
		return len(u.body.items)
	}
	return 0
}

// newest returns what the consumer holds for the unit's key once the unit
// is applied: the newest object, or absent if the history ends in a delete.
func (u *unit) newest() (runtime.Object, bool) {
	d := u.items[0].Deltas.Newest()
	if d.Type == Deleted {
		return nil, false
	}
	return d.Object, true
}

// line is the queue's waiting line: a FIFO of units in a ring buffer, so
// that popping the head and (rarely) pushing back to the front are O(1) and
// a long-lived queue does not keep re-slicing one ever-growing array.
// It is not safe for concurrent use; Queue.mu guards it.
type line struct {
	buf  []*unit
	head int // index of the first unit
	n    int // number of units
}

func (l *line) len() int { return l.n }

func (l *line) front() *unit {
	if l.n == 0 {
		return nil
	}
	return l.buf[l.head]
}

func (l *line) back() *unit {
	if l.n == 0 {
		return nil
	}
	return l.buf[(l.head+l.n-1)%len(l.buf)]
}

func (l *line) pushBack(u *unit) {
	l.grow()
	l.buf[(l.head+l.n)%len(l.buf)] = u
	l.n++
}

// pushFront puts u before every other unit: used to give a requeued batch
// its place back.
func (l *line) pushFront(u *unit) {
	l.grow()
	l.head = (l.head - 1 + len(l.buf)) % len(l.buf)
	l.buf[l.head] = u
	l.n++
}

func (l *line) popFront() *unit {
	u := l.buf[l.head]
	l.buf[l.head] = nil // let the garbage collector have it once delivered
	l.head = (l.head + 1) % len(l.buf)
	l.n--
	// Give memory back after a burst: a queue that once held 100k units
	// should not keep a 100k-slot ring for the rest of its life.
	if len(l.buf) > 1024 && l.n < len(l.buf)/4 {
		l.resize(len(l.buf) / 2)
	}
	return u
}

// grow doubles the ring when it is full.
func (l *line) grow() {
	if l.n == len(l.buf) {
		l.resize(max(16, 2*len(l.buf)))
	}
}

// resize moves the units to a ring of the given size, unrolled so that the
// head is at index 0 again.
func (l *line) resize(size int) {
	next := make([]*unit, size)
	for i := range l.n {
		next[i] = l.buf[(l.head+i)%len(l.buf)]
	}
	l.buf, l.head = next, 0
}
