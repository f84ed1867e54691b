package deltafifo

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
)

// Replace states the complete set of objects at resourceVersion rv, after a
// relist. Every listed object is queued as Replaced; then every key the
// consumer will hold (known, queued or in flight) that is absent from list
// gets a tombstone: a Deleted delta with FinalStateUnknown set and the
// key's last known object, because it was deleted while nobody watched.
//
// In per-key mode the Replaced deltas and tombstones join each key's place
// in line, and a marker carrying rv follows them. With AtomicRelist the
// whole Replace is one Relist batch (see the package doc).
//
// If the list holds an object without a key, or Transform fails on one,
// Replace returns the error and queues nothing at all: a partial relist
// would produce tombstones for objects that exist. A list with two objects
// of one key keeps the later.
func (q *Queue) Replace(list []runtime.Object, rv string) error {
	objs, index, err := q.admitList(list)
	if err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return ErrClosed
	}
	first := !q.populated
	tombstones := q.tombstones(index)
	clk := &opClock{}
	if q.atomicRelist {
		q.queueRelist(objs, index, tombstones, rv, first, clk)
		return nil
	}
	initial := 0
	for _, o := range objs {
		initial += markInitial(q.enqueue(o.key, Delta{Type: Replaced, Object: o.obj}, clk), first)
	}
	for _, t := range tombstones {
		initial += markInitial(q.enqueue(t.key, t.Delta, clk), first)
	}
	if first {
		q.populate(initial)
	}
	if rv != "" {
		q.pushMarker(rv, clk)
	}
	return nil
}

// keyed is an object with its key.
type keyed struct {
	key string
	obj runtime.Object
}

// tombstone is a delta with its key.
type tombstone struct {
	key string
	Delta
}

// admitList checks and transforms a list outside the lock. index maps each
// key to its position in objs.
func (q *Queue) admitList(list []runtime.Object) ([]keyed, map[string]int, error) {
	objs := make([]keyed, 0, len(list))
	index := make(map[string]int, len(list))
	for i, obj := range list {
		key, obj, err := q.admit(obj)
		if err != nil {
			return nil, nil, fmt.Errorf("deltafifo: Replace: item %d: %w", i, err)
		}
		if at, dup := index[key]; dup {
			objs[at].obj = obj // a broken server listed the key twice: last wins
			continue
		}
		index[key] = len(objs)
		objs = append(objs, keyed{key, obj})
	}
	return objs, index, nil
}

// markInitial marks u as part of the first Replace when first is true, and
// returns 1 if that made one more unit for HasSynced to wait for. A unit is
// counted once however many of the Replace's deltas it holds.
func markInitial(u *unit, first bool) int {
	if !first || u.initial {
		return 0
	}
	u.initial = true
	return 1
}

// tombstones returns a tombstone for every key the consumer will hold that
// is absent from listed, sorted by key so that runs are reproducible.
// Callers hold mu.
func (q *Queue) tombstones(listed map[string]int) []tombstone {
	var out []tombstone
	q.forEachCandidate(func(key string) {
		if _, ok := listed[key]; ok {
			return
		}
		if obj, exists := q.stateOf(key); exists {
			out = append(out, tombstone{key, Delta{Type: Deleted, Object: obj, FinalStateUnknown: true}})
		}
	})
	slices.SortFunc(out, func(a, b tombstone) int { return strings.Compare(a.key, b.key) })
	return out
}

// forEachCandidate calls fn once for every key the consumer might hold once
// everything queued and in flight is applied: keys with a unit, plus the
// base the units apply to (the pending relist's keys if there is one, else
// KnownObjects' keys). Callers hold mu.
func (q *Queue) forEachCandidate(fn func(key string)) {
	for key := range q.entries {
		fn(key)
	}
	if u := q.inline.unit; u != nil && q.entries[u.items[0].Key] == nil {
		fn(u.items[0].Key) // the inline unit is not in entries (inline.go)
	}
	var base []string
	switch {
	case q.relist != nil:
		for key := range q.relist.body.index {
			base = append(base, key)
		}
	case q.known != nil:
		base = q.known.ListKeys()
	}
	for _, key := range base {
		if q.unitOf(key) == nil {
			fn(key)
		}
	}
}

// stateOf reports what the consumer will hold for key once everything
// queued and in flight has been applied: the object, or false if absent.
//
// This is the heart of the queue's correctness, because process runs
// without the lock: when Delete or Replace asks "does the consumer have
// this key?", the answer must count the batch being applied right now as
// applied, whether or not its writes have landed yet. Three layers, newest
// first: the key's newest unit (unless a pending relist is newer), the
// pending relist, then KnownObjects. Callers hold mu.
func (q *Queue) stateOf(key string) (runtime.Object, bool) {
	u := q.unitOf(key)
	if u != nil && (q.relist == nil || u.seq > q.relist.seq) {
		return u.newest()
	}
	if q.relist != nil {
		return q.relist.body.lookup(key)
	}
	if q.known != nil {
		return q.known.Get(key)
	}
	return nil, false
}

// queueRelist queues a whole Replace as one unit: tombstones first, then
// the listed objects. It then raises the barrier generation, so that later
// deltas queue behind it even for keys that are already in line before it.
// Callers hold mu.
func (q *Queue) queueRelist(objs []keyed, index map[string]int, dead []tombstone, rv string, first bool, clk *opClock) {
	items := make([]Item, 0, len(dead)+len(objs))
	deltas := make([]Delta, 0, len(dead)+len(objs)) // one array for all items
	for _, t := range dead {
		deltas = append(deltas, t.Delta)
		items = append(items, Item{Key: t.key, Deltas: deltas[len(deltas)-1 : len(deltas) : len(deltas)]})
	}
	for _, o := range objs {
		deltas = append(deltas, Delta{Type: Replaced, Object: o.obj})
		items = append(items, Item{Key: o.key, Deltas: deltas[len(deltas)-1 : len(deltas) : len(deltas)]})
	}
	// An empty first relist has no item to wait for: synced at once, as in
	// per-key mode.
	initial := first && len(items) > 0
	u := &unit{kind: relistUnit, initial: initial, body: &body{rv: rv, items: items, index: index, listedFrom: len(dead)}}
	for i := range items {
		items[i].InInitialList = initial
	}
	q.counters.Enqueued += uint64(len(items))
	q.push(u, clk)
	q.seg++
	q.relist = u
	if first {
		waitFor := 0 // units HasSynced waits for: this one, unless empty
		if initial {
			waitFor = 1
		}
		q.populate(waitFor)
	}
}

// Resync queues a Sync delta, with the object KnownObjects holds, for every
// known key that has nothing queued or in flight. Keys with pending deltas
// are skipped: their object in KnownObjects is about to be replaced, and a
// Sync carrying it would reach the consumer after newer state. For the same
// reason Resync does nothing while a relist is pending (and the relist
// re-delivers every object anyway). Without KnownObjects it does nothing.
func (q *Queue) Resync() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return ErrClosed
	}
	if q.known == nil || q.relist != nil {
		return nil
	}
	clk := &opClock{}
	for _, key := range q.known.ListKeys() {
		if q.unitOf(key) != nil {
			continue
		}
		if obj, ok := q.known.Get(key); ok {
			q.enqueue(key, Delta{Type: Sync, Object: obj}, clk)
		}
	}
	return nil
}
