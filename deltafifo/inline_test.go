package deltafifo

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"
)

// newWithInline returns a queue with the inline hand-off on, as the
// informer turns it on.
func newWithInline(opts Options, process func(Batch) error, ok func() bool) *Queue {
	opts.Inline, opts.InlineIf = process, ok
	return New(opts)
}

// inlineRecorder is an inline process function that applies batches to a store and
// records copies of them (an inline Batch is valid only during the call).
type inlineRecorder struct {
	s     *store
	seen  []Item
	reply func(Batch) error // nil: return nil
}

func (r *inlineRecorder) process(b Batch) error {
	r.s.apply(b)
	for _, it := range b.Items {
		r.seen = append(r.seen, Item{Key: it.Key, Deltas: append(Deltas(nil), it.Deltas...), InInitialList: it.InInitialList})
	}
	if r.reply != nil {
		return r.reply(b)
	}
	return nil
}

// newInlineQueue returns a queue whose inline process records into rec and applies
// to s, which is also its KnownObjects.
func newInlineQueue() (q *Queue, s *store, rec *inlineRecorder) {
	s = newStore()
	rec = &inlineRecorder{s: s}
	return newWithInline(Options{KnownObjects: s}, rec.process, nil), s, rec
}

func TestInlineAppliesAtOnceWhenIdle(t *testing.T) {
	q, s, rec := newInlineQueue()
	a1, a2 := pod("a", "1"), pod("a", "2")

	require.NoError(t, q.Add(a1))
	// Applied before Add returned, on this goroutine; nothing waits.
	assert.Equal(t, []Item{item("ns/a", add(a1))}, rec.seen)
	assert.Equal(t, a1, s.snapshot()["ns/a"])
	assert.Zero(t, q.queuedUnits())

	require.NoError(t, q.Update(a2))
	require.NoError(t, q.Delete(a2))
	assert.Equal(t, []Item{item("ns/a", add(a1)), item("ns/a", upd(a2)), item("ns/a", del(a2))}, rec.seen)
	assert.Empty(t, s.snapshot())

	// A delete of a key the consumer no longer holds is still not news.
	require.NoError(t, q.Delete(a2))
	st := q.Stats()
	assert.EqualValues(t, 3, st.Enqueued)
	assert.EqualValues(t, 3, st.Delivered)
	assert.EqualValues(t, 1, st.IgnoredDeletes)
	assert.Zero(t, st.Depth)
	assert.Zero(t, st.InFlight)
}

func TestInlineQueuesBehindWaitingUnits(t *testing.T) {
	q, s, rec := newInlineQueue()
	b1, c1 := pod("b", "1"), pod("c", "1")

	// Replace never goes inline, and an Add behind it must not overtake it.
	require.NoError(t, q.Replace(objs(b1), "10"))
	require.NoError(t, q.Add(c1))
	assert.Empty(t, rec.seen, "nothing may skip the line while units wait")

	got := items(popAll(t, q, s))
	assert.Equal(t, []Item{{Key: "ns/b", Deltas: Deltas{repl(b1)}, InInitialList: true}, item("ns/c", add(c1))}, got)
	assert.True(t, q.HasSynced())

	// The line is empty again: the next write goes inline.
	c2 := pod("c", "2")
	require.NoError(t, q.Update(c2))
	assert.Equal(t, []Item{item("ns/c", upd(c2))}, rec.seen)
}

func TestInlineWaitsWhileAPopProcesses(t *testing.T) {
	q, s, rec := newInlineQueue()
	a1, b1 := pod("a", "1"), pod("b", "1")
	require.NoError(t, q.Replace(objs(a1), "1"))

	entered, release := make(chan struct{}), make(chan struct{})
	popped := make(chan error, 1)
	go func() {
		popped <- q.Pop(context.Background(), func(b Batch) error {
			close(entered)
			<-release
			s.apply(b)
			return nil
		})
	}()
	<-entered
	// A Pop is processing: this write must queue, not run beside it.
	require.NoError(t, q.Add(b1))
	assert.Empty(t, rec.seen)
	close(release)
	require.NoError(t, <-popped)

	assert.Equal(t, []Item{item("ns/b", add(b1))}, items(popAll(t, q, s)))
	assert.Empty(t, rec.seen)
}

func TestInlineInFlightCountsAsApplied(t *testing.T) {
	s := newStore()
	inline, entered, release := blockingInline(s)
	q := newWithInline(Options{KnownObjects: s}, inline, nil)
	a1 := pod("a", "1")
	added := make(chan error, 1)
	go func() { added <- q.Add(a1) }()
	<-entered
	// The add is in flight, not yet in the store: a Delete of its key is
	// news all the same, and queues behind it.
	require.NoError(t, q.Delete(a1))
	assert.Equal(t, 1, q.queuedUnits())
	close(release)
	require.NoError(t, <-added)

	assert.Equal(t, []Item{item("ns/a", del(a1))}, items(popAll(t, q, s)))
	assert.Empty(t, s.snapshot())
}

func TestInlineRequeueGoesToTheLine(t *testing.T) {
	s := newStore()
	rec := &inlineRecorder{s: s, reply: func(Batch) error { return ErrRequeue }}
	q := newWithInline(Options{KnownObjects: newStore()}, rec.process, nil)
	a1 := pod("a", "1")

	err := q.Add(a1)
	require.ErrorIs(t, err, ErrRequeue)
	st := q.Stats()
	assert.EqualValues(t, 1, st.Requeued)
	assert.Equal(t, 1, st.Depth)
	assert.Less(t, st.OldestAge, time.Hour, "a requeued inline unit gets a real queue time")

	// The next write of the key joins the requeued unit, then Pop delivers
	// both, in order.
	a2 := pod("a", "2")
	require.NoError(t, q.Update(a2))
	assert.Equal(t, []Item{item("ns/a", add(a1), upd(a2))}, items(popAll(t, q, nil)))
}

func TestInlineErrorIsReturnedAndCounted(t *testing.T) {
	boom := errors.New("boom")
	s := newStore()
	rec := &inlineRecorder{s: s, reply: func(Batch) error { return boom }}
	q := newWithInline(Options{KnownObjects: s}, rec.process, nil)

	err := q.Add(pod("a", "1"))
	require.ErrorIs(t, err, boom)
	st := q.Stats()
	assert.EqualValues(t, 1, st.Failed)
	assert.EqualValues(t, 1, st.Delivered)
	assert.Zero(t, st.Depth, "a failed batch counts as delivered, as with Pop")
}

func TestInlineReusedUnitsKeepKeysApart(t *testing.T) {
	q, s, rec := newInlineQueue()
	names := []string{"a", "b", "c", "d"}
	for _, n := range names {
		require.NoError(t, q.Add(pod(n, "1")))
	}
	for _, n := range names[:2] {
		require.NoError(t, q.Delete(pod(n, "1")))
	}
	assert.Equal(t, []string{"ns/c", "ns/d"}, s.ListKeys())
	require.Len(t, rec.seen, 6)
	for i, n := range names {
		assert.Equal(t, item("ns/"+n, add(pod(n, "1"))), rec.seen[i])
	}
}

func TestInlineOkFuncCanSendWritesToTheLine(t *testing.T) {
	s := newStore()
	rec := &inlineRecorder{s: s}
	allow := false
	q := newWithInline(Options{KnownObjects: s}, rec.process, func() bool { return allow })
	a1, a2 := pod("a", "1"), pod("a", "2")

	require.NoError(t, q.Add(a1))
	assert.Empty(t, rec.seen, "the hook's ok func said no: the write must queue")
	assert.Equal(t, []Item{item("ns/a", add(a1))}, items(popAll(t, q, s)))

	allow = true
	require.NoError(t, q.Update(a2))
	assert.Equal(t, []Item{item("ns/a", upd(a2))}, rec.seen)
}

// blockingInline returns an Inline that applies to s, but whose first call
// waits, having closed entered, until release is closed.
func blockingInline(s *store) (inline func(Batch) error, entered, release chan struct{}) {
	entered, release = make(chan struct{}), make(chan struct{})
	first := true
	return func(b Batch) error {
		if first {
			first = false
			close(entered)
			<-release
		}
		s.apply(b)
		return nil
	}, entered, release
}

func TestResyncSkipsTheKeyInlining(t *testing.T) {
	a1, a2 := pod("a", "1"), pod("a", "2")
	s := newStore(a1)
	inline, entered, release := blockingInline(s)
	q := newWithInline(Options{KnownObjects: s}, inline, nil)
	require.NoError(t, q.Replace(objs(a1), "1"))
	popAll(t, q, s)

	done := make(chan error, 1)
	go func() { done <- q.Update(a2) }()
	<-entered
	// The store still holds a1, but a2 is in flight: a Sync of a1 queued
	// now would be applied after a2 and take the key back in time.
	require.NoError(t, q.Resync())
	assert.Zero(t, q.queuedUnits())
	close(release)
	require.NoError(t, <-done)
	assert.Equal(t, a2, s.snapshot()["ns/a"])
}

func TestReplaceTombstonesTheKeyInlining(t *testing.T) {
	s := newStore()
	inline, entered, release := blockingInline(s)
	q := newWithInline(Options{KnownObjects: s}, inline, nil)
	require.NoError(t, q.Replace(nil, "1"))
	popAll(t, q, s)

	b1 := pod("b", "2")
	done := make(chan error, 1)
	go func() { done <- q.Add(b1) }()
	<-entered
	// A relist without b while b's add is in flight: b was deleted, and
	// only the in-flight add says the consumer will hold it.
	require.NoError(t, q.Replace(nil, "3"))
	close(release)
	require.NoError(t, <-done)

	got := items(popAll(t, q, s))
	require.Len(t, got, 1)
	assert.Equal(t, "ns/b", got[0].Key)
	assert.Equal(t, Deltas{tomb(b1)}, got[0].Deltas)
	assert.Empty(t, s.snapshot())
}

// TestInlineWalkthrough: a write that finds the queue idle is applied at
// once, on the writer's goroutine, and a write that finds something in
// line queues behind it as usual: here the relist waits in line, so the
// add that follows it does too, and the update after the Pops goes inline.
// (It was the package's ExampleOptions_inline while the hand-off was API.)
func TestInlineWalkthrough(t *testing.T) {
	s := newStore()
	var log []string
	process := func(b Batch) error {
		log = append(log, "process "+batchLine(b))
		s.apply(b)
		return nil
	}
	q := newWithInline(Options{KnownObjects: s}, process, nil)

	require.NoError(t, q.Replace([]runtime.Object{pod("web", "1")}, "1")) // never inline
	require.NoError(t, q.Add(pod("db", "2")))                             // something waits: queued
	assert.Equal(t, 2, q.Stats().Depth)
	for q.Stats().Depth > 0 {
		require.NoError(t, q.Pop(context.Background(), process))
	}
	log = append(log, "update:")
	require.NoError(t, q.Update(pod("web", "3"))) // the queue is idle: applied before Update returns
	assert.Equal(t, 0, q.Stats().Depth)
	assert.Equal(t, []string{
		"process ns/web: Replaced(1)",
		"process rv=1",
		"process ns/db: Added(2)",
		"update:",
		"process ns/web: Updated(3)",
	}, log)
}
