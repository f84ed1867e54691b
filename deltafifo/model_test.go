package deltafifo

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

var seedFlag = flag.Uint64("seed", 0, "seed for TestModel (0 = from DELTAFIFO_SEED, else random)")

// modelSeed returns the base seed: -seed, else $DELTAFIFO_SEED, else random.
func modelSeed(t *testing.T) uint64 {
	if *seedFlag != 0 {
		return *seedFlag
	}
	if s := os.Getenv("DELTAFIFO_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("DELTAFIFO_SEED=%q: %v", s, err)
		}
		return n
	}
	return rand.Uint64()
}

// TestModel drives the queue with random sequences of Add, Update, Delete,
// Replace, Resync, Bookmark, Pop, PopBatch and requeues, some of them issued
// while a batch is in flight, and checks it against a plain map: the
// "server". A consumer applies popped batches to a map (the KnownObjects)
// and checks invariants on every delta. Some server changes are hidden from
// the queue (a watch that missed events); a later Replace must repair them.
//
// Re-run a failure with: go test ./deltafifo -run TestModel -seed=N
func TestModel(t *testing.T) { runModels(t, false) }

// TestModelFaults is TestModel with process functions (Pop's and Inline)
// that requeue, panic, fail after applying, or let the producer write while
// they hold a batch.
func TestModelFaults(t *testing.T) { runModels(t, true) }

// runModels runs 400 models of 120 steps from one seed, every combination
// of newModel's options in turn, with faulty process functions or not.
func runModels(t *testing.T, faults bool) {
	base := modelSeed(t)
	t.Logf("seed=%d (re-run with -seed=%d or DELTAFIFO_SEED=%d)", base, base, base)
	const runs, steps = 400, 120
	for i := range uint64(runs) {
		m := newModel(t, base+i, i%2 == 1, i%4 < 2, i%8 >= 4)
		m.faults = faults
		m.run(steps)
	}
}

type model struct {
	t    *testing.T
	seed uint64
	rng  *rand.Rand
	q    *Queue

	atomic, compact, inline bool
	// faults makes process functions (Pop's and Inline) misbehave now and
	// then: requeue, panic, fail after applying, or let producer operations
	// run while they hold the batch.
	faults bool

	// The server: objects by key, its resourceVersion counter, and the
	// version at which each key last changed (for the bookmark invariant).
	rv         int
	server     map[string]*corev1.Pod
	lastChange map[string]int
	// told is false while the queue has missed a server change that no
	// Replace has repaired yet; bookmarks are only legal when it is true.
	told bool

	// The consumer: its store, and the highest version applied per key.
	known    *store
	lastSeen map[string]int
	log      []string
	// concurrent is set when producer and consumer run on two goroutines:
	// the consumer then must not read the server (checkVersion is skipped).
	concurrent bool
}

// newModel builds one run's model. With inline, the queue applies writes
// that find it idle through the inline hand-off (inline.go), on the
// producer's goroutine.
func newModel(t *testing.T, seed uint64, atomicMode, compact, inline bool) *model {
	m := &model{
		t: t, seed: seed, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		atomic: atomicMode, compact: compact, inline: inline,
		server: map[string]*corev1.Pod{}, lastChange: map[string]int{}, told: true,
		known: newStore(), lastSeen: map[string]int{},
	}
	opts := Options{KnownObjects: m.known, AtomicRelist: atomicMode, KeepAllUpdates: !compact}
	if inline {
		opts.Inline = func(b Batch) error { return m.process(b, "Inline") }
		// With faults on, the owner sometimes declines the hand-off.
		opts.InlineIf = func() bool { return !m.faults || m.rng.IntN(4) > 0 }
	}
	m.q = New(opts)
	return m
}

func (m *model) fail(format string, args ...any) {
	m.t.Helper()
	var tail []string
	if !m.concurrent { // the producer goroutine owns the log while it runs
		tail = m.log[max(0, len(m.log)-25):]
	}
	m.t.Errorf("seed=%d atomic=%v compact=%v inline=%v: %s\nlast operations:\n  %s",
		m.seed, m.atomic, m.compact, m.inline, fmt.Sprintf(format, args...), strings.Join(tail, "\n  "))
	// FailNow, which may only be called from the test's goroutine; in a
	// concurrent model the consumer's goroutine fails too, and Goexit then
	// ends just that goroutine, whose caller waits for it.
	goruntime.Goexit()
}

func (m *model) check(err error) {
	m.t.Helper()
	if err != nil {
		m.fail("unexpected error: %v", err)
	}
}

func (m *model) run(steps int) {
	for range steps {
		if m.rng.IntN(10) < 6 {
			m.produce()
		} else {
			m.consume()
		}
	}
	m.quiesce()
}

// produce performs one random producer operation.
func (m *model) produce() {
	switch r := m.rng.IntN(100); {
	case r < 60:
		m.change(m.rng.IntN(100) < 15)
	case r < 63:
		key := fmt.Sprintf("k%d", m.rng.IntN(6))
		if m.server["ns/"+key] == nil { // a repeated delete for an absent key
			m.logf("Delete(%s) spurious", key)
			m.checkFault(m.survive(func() error { return m.q.Delete(pod(key, strconv.Itoa(m.rv))) }))
		}
	case r < 78:
		m.replace()
	case r < 90:
		m.logf("Resync")
		m.check(m.q.Resync())
	default:
		if m.told && m.rv > 0 {
			m.logf("Bookmark(%d)", m.rv)
			m.check(m.q.Bookmark(strconv.Itoa(m.rv)))
		}
	}
}

// change creates, updates or deletes a random key on the server and tells
// the queue, unless hidden (the watch missed it).
func (m *model) change(hidden bool) {
	name := fmt.Sprintf("k%d", m.rng.IntN(6))
	key := "ns/" + name
	m.rv++
	obj := pod(name, strconv.Itoa(m.rv))
	m.lastChange[key] = m.rv
	old := m.server[key]
	verb, tell := "", (func(runtime.Object) error)(nil)
	switch {
	case old == nil:
		m.server[key], verb, tell = obj, "Add", m.q.Add
	case m.rng.IntN(3) == 0:
		delete(m.server, key)
		verb, tell = "Delete", m.q.Delete
	default:
		m.server[key], verb, tell = obj, "Update", m.q.Update
	}
	if hidden {
		m.told = false
		m.logf("%s(%s@%d) hidden", verb, name, m.rv)
		return
	}
	m.logf("%s(%s@%d)", verb, name, m.rv)
	m.checkFault(m.survive(func() error { return tell(obj) }))
}

var errFault = errors.New("process failed after applying")

// errPanic is what survive returns when a process function panicked.
var errPanic = errors.New("process panicked")

// process is a process function (for Pop or Inline). With faults on it may
// run producer operations while the batch is in flight, then requeue it,
// panic (both before applying), or apply it and fail anyway.
func (m *model) process(b Batch, who string) error {
	if !m.faults {
		m.apply(b)
		return nil
	}
	if m.rng.IntN(100) < 20 {
		m.logf("%s: interleave", who)
		for range 1 + m.rng.IntN(3) {
			m.produce()
		}
	}
	switch r := m.rng.IntN(100); {
	case r < 8:
		m.logf("%s: requeue", who)
		return ErrRequeue
	case r < 12:
		m.logf("%s: panic", who)
		panic(errPanic)
	case r < 16:
		m.logf("%s: fail after applying", who)
		m.apply(b)
		return errFault
	}
	m.apply(b)
	return nil
}

// survive runs f, turning a panic of a process function into errPanic.
func (m *model) survive(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if r != errPanic {
				panic(r)
			}
			err = errPanic
		}
	}()
	return f()
}

// checkFault fails on any error but those the faults cause.
func (m *model) checkFault(err error) {
	m.t.Helper()
	if err != nil && !errors.Is(err, ErrRequeue) && !errors.Is(err, errFault) && !errors.Is(err, errPanic) {
		m.fail("unexpected error: %v", err)
	}
}

func (m *model) replace() {
	var list []runtime.Object
	for _, k := range sortedKeys(m.server) {
		list = append(list, m.server[k])
	}
	m.told = true
	m.logf("Replace(%d objects)@%d", len(list), m.rv)
	m.check(m.q.Replace(list, strconv.Itoa(m.rv)))
}

// consume pops one batch, sometimes running producer operations while it is
// in flight (before the consumer has applied it), sometimes requeueing it.
func (m *model) consume() {
	if m.q.queuedUnits() == 0 {
		return
	}
	n := 1 + m.rng.IntN(4)
	interleave := m.rng.IntN(100) < 30
	requeue := m.rng.IntN(100) < 5
	m.logf("PopBatch(%d) interleave=%v requeue=%v", n, interleave, requeue)
	err := m.survive(func() error {
		return m.q.PopBatch(m.t.Context(), n, func(b Batch) error {
			if interleave {
				for range 1 + m.rng.IntN(3) {
					m.produce()
				}
			}
			if requeue {
				return ErrRequeue
			}
			return m.process(b, "Pop")
		})
	})
	if requeue {
		if err == nil {
			m.fail("requeue: Pop returned nil")
		}
		return
	}
	m.checkFault(err)
}

// quiesce repairs anything hidden with a Replace, drains the queue and
// checks that the consumer ended with exactly the server's state.
func (m *model) quiesce() {
	if !m.told {
		m.replace()
	}
	for m.q.queuedUnits() > 0 {
		m.check(m.q.PopBatch(m.t.Context(), 3, func(b Batch) error { m.apply(b); return nil }))
	}
	got := m.known.snapshot()
	if len(got) != len(m.server) {
		m.fail("consumer has %v, server has %v", sortedKeys(got), sortedKeys(m.server))
	}
	for k, want := range m.server {
		if got[k] != runtime.Object(want) {
			m.fail("key %s: consumer has %v, server has %v", k, describe(got[k]), describe(want))
		}
	}
	s := m.q.Stats()
	if s.Depth != 0 || s.Deltas != 0 || len(m.q.entries) != 0 || m.q.relist != nil {
		m.fail("drained queue still holds state: %+v, %d entries", s, len(m.q.entries))
	}
	if m.q.populated && !m.q.HasSynced() {
		m.fail("drained and populated, but not synced")
	}
}

// apply checks a batch against the consumer's state, then applies it.
func (m *model) apply(b Batch) {
	if m.q.HasSynced() {
		for _, it := range b.Items {
			if it.InInitialList {
				m.fail("HasSynced is true while initial item %s is being processed", it.Key)
			}
		}
	}
	if b.Relist {
		m.applyRelist(b)
	} else {
		seen := map[string]bool{}
		for _, it := range b.Items {
			if seen[it.Key] {
				m.fail("batch holds %s twice", it.Key)
			}
			seen[it.Key] = true
			m.applyItem(it)
		}
	}
	if b.ResourceVersion != "" && !m.concurrent {
		m.checkVersion(b.ResourceVersion)
	}
}

func (m *model) applyItem(it Item) {
	if len(it.Deltas) == 0 {
		m.fail("empty item %s", it.Key)
	}
	for i, d := range it.Deltas {
		if i > 0 && d.Type == Deleted && it.Deltas[i-1].Type == Deleted {
			m.fail("%s: two deletes in a row", it.Key)
		}
		if i > 0 && m.compact && isChange(d.Type) && (isChange(it.Deltas[i-1].Type) || it.Deltas[i-1].Type == Sync) {
			m.fail("%s: %s after %s with compaction on", it.Key, d.Type, it.Deltas[i-1].Type)
		}
		m.applyDelta(it.Key, d)
	}
}

func (m *model) applyDelta(key string, d Delta) {
	if k, _ := MetaNamespaceKey(d.Object); k != key {
		m.fail("delta for %s carries object %s", key, k)
	}
	m.known.mu.Lock()
	cur, present := m.known.objs[key]
	m.known.mu.Unlock()
	if d.Type == Deleted {
		if !present {
			m.fail("%s: delete of a key the consumer does not have", key)
		}
		if d.FinalStateUnknown && d.Object != cur {
			m.fail("%s: tombstone carries %s, consumer has %s", key, describe(d.Object), describe(cur))
		}
	}
	if !d.FinalStateUnknown {
		v := version(d.Object)
		if v < m.lastSeen[key] {
			m.fail("%s: %s of version %d after version %d", key, d.Type, v, m.lastSeen[key])
		}
		m.lastSeen[key] = v
	}
	m.known.apply(Batch{Items: []Item{{Key: key, Deltas: Deltas{d}}}})
}

func (m *model) applyRelist(b Batch) {
	before := m.known.snapshot()
	listed, dead := map[string]bool{}, map[string]bool{}
	tombstones := true
	for _, it := range b.Items {
		d := it.Deltas.Newest()
		if len(it.Deltas) != 1 {
			m.fail("relist item %s has %d deltas", it.Key, len(it.Deltas))
		}
		switch {
		case d.Type == Deleted && d.FinalStateUnknown && tombstones:
			if before[it.Key] == nil || before[it.Key] != d.Object {
				m.fail("relist tombstone for %s carries %s, consumer has %s", it.Key, describe(d.Object), describe(before[it.Key]))
			}
			dead[it.Key] = true
		case d.Type == Replaced:
			tombstones = false
			listed[it.Key] = true
			if v := version(d.Object); v < m.lastSeen[it.Key] {
				m.fail("relist: %s at version %d after version %d", it.Key, v, m.lastSeen[it.Key])
			}
		default:
			m.fail("relist item %s: unexpected %+v", it.Key, d)
		}
	}
	for k := range before {
		if !listed[k] && !dead[k] {
			m.fail("relist neither lists nor tombstones %s, which the consumer has", k)
		}
	}
	for _, it := range b.Items {
		if d := it.Deltas[0]; d.Type == Replaced {
			m.lastSeen[it.Key] = version(d.Object)
		}
	}
	m.known.apply(b)
}

// checkVersion: once a batch carrying rv is applied, every key the server
// has not changed since rv must be exactly as the server has it.
func (m *model) checkVersion(rvText string) {
	rv, err := strconv.Atoi(rvText)
	if err != nil {
		m.fail("bad resourceVersion %q", rvText)
	}
	got := m.known.snapshot()
	for key, changed := range m.lastChange {
		if changed > rv {
			continue
		}
		want, has := m.server[key]
		if has != (got[key] != nil) || (has && got[key] != runtime.Object(want)) {
			m.fail("at rv %d, %s (last changed at %d): consumer has %s, server %s", rv, key, changed, describe(got[key]), describe(want))
		}
	}
}

// TestModelConcurrent runs the producer and the consumer on two goroutines,
// as in an informer, so that writes really race with process functions, and
// checks the same per-delta invariants and the final convergence.
func TestModelConcurrent(t *testing.T) {
	base := modelSeed(t)
	t.Logf("seed=%d", base)
	for i := range uint64(8) {
		m := newModel(t, base+i, i%2 == 1, i%4 < 2, i%8 >= 4)
		m.concurrent = true
		consumed := make(chan struct{})
		go func() {
			defer close(consumed)
			for {
				err := m.q.PopBatch(t.Context(), 1+int(i%3), func(b Batch) error { m.apply(b); return nil })
				if err != nil {
					return // ErrClosed once drained
				}
			}
		}()
		for range 2000 {
			m.produce()
		}
		if !m.told {
			m.replace()
		}
		m.q.Close()
		<-consumed
		m.concurrent = false
		m.quiesce()
	}
}

func (m *model) logf(format string, args ...any) {
	m.log = append(m.log, fmt.Sprintf(format, args...))
}

func version(o runtime.Object) int {
	v, _ := strconv.Atoi(o.(*corev1.Pod).ResourceVersion)
	return v
}

func describe(o runtime.Object) string {
	p, ok := o.(*corev1.Pod)
	if !ok || p == nil {
		return "nothing"
	}
	return p.Name + "@" + p.ResourceVersion
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
