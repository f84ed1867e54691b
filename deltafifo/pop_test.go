package deltafifo

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// waiters reports whether some Pop is asleep waiting for a change.
func (q *Queue) waiters() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.wake != nil
}

func TestPopContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options{})
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		require.NoError(t, q.Add(pod("a", "1")))
		err := q.Pop(ctx, func(Batch) error { t.Fatal("process called with a cancelled context"); return nil })
		require.ErrorIs(t, err, context.Canceled)
		require.Equal(t, 1, q.Stats().Depth, "the item stays queued")

		// A Pop asleep on an empty queue wakes when its context ends.
		empty := New(Options{})
		ctx, cancel = context.WithCancel(t.Context())
		defer cancel() // if the test fails before it does
		done := make(chan error, 1)
		go func() { done <- empty.Pop(ctx, func(Batch) error { return nil }) }()
		synctest.Wait() // the Pop is asleep
		require.True(t, empty.waiters())
		cancel()
		require.ErrorIs(t, <-done, context.Canceled)
	})
}

func TestCloseWakesEveryWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options{})
		// Cancelled when the test returns, failed or not, so that no Pop
		// outlives it (the bubble would end in a deadlock panic).
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		const n = 8
		errs := make(chan error, n)
		for range n {
			go func() { errs <- q.Pop(ctx, func(Batch) error { return nil }) }()
		}
		synctest.Wait() // every Pop is asleep
		require.True(t, q.waiters())
		q.Close()
		synctest.Wait()
		require.Len(t, errs, n, "every Pop returned")
		for range n {
			require.ErrorIs(t, <-errs, ErrClosed)
		}
		q.Close() // idempotent
	})
}

func TestCloseDrainsThenFails(t *testing.T) {
	q := New(Options{})
	require.NoError(t, q.Add(pod("a", "1")))
	q.Close()
	require.ErrorIs(t, q.Add(pod("b", "1")), ErrClosed)
	require.ErrorIs(t, q.Replace(nil, "1"), ErrClosed)
	require.ErrorIs(t, q.Bookmark("1"), ErrClosed)
	require.ErrorIs(t, q.Resync(), ErrClosed)
	var got []string
	require.NoError(t, q.Pop(t.Context(), func(b Batch) error { got = append(got, b.Items[0].Key); return nil }))
	require.Equal(t, []string{"ns/a"}, got)
	require.ErrorIs(t, q.Pop(t.Context(), func(Batch) error { return nil }), ErrClosed)
}

// TestSlowConsumerDoesNotBlockWriters holds a process function open and
// checks that every write and read of the queue still completes.
func TestSlowConsumerDoesNotBlockWriters(t *testing.T) {
	q := New(Options{KnownObjects: newStore()})
	require.NoError(t, q.Add(pod("a", "1")))
	entered, release := make(chan struct{}), make(chan struct{})
	popped := make(chan error)
	go func() {
		popped <- q.Pop(t.Context(), func(Batch) error {
			close(entered)
			<-release
			return nil
		})
	}()
	<-entered
	writes := make(chan error)
	go func() {
		writes <- errors.Join(
			q.Add(pod("b", "1")),
			q.Update(pod("b", "2")),
			q.Delete(pod("a", "1")),
			q.Replace(objs(pod("b", "2")), "9"),
			q.Resync(),
			q.Bookmark("10"),
		)
		_ = q.Stats()
		_ = q.HasSynced()
	}()
	select {
	case err := <-writes:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("writes blocked while a process function was running")
	}
	require.Equal(t, 1, q.Stats().InFlight)
	close(release)
	require.NoError(t, <-popped)
}

// TestPopsTakeTurns runs several consumers at once and checks that no two
// process functions ever overlap and that every key arrives exactly once.
func TestPopsTakeTurns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options{})
		const keys = 200
		for i := range keys {
			require.NoError(t, q.Add(pod(string(rune('A'+i%26))+string(rune('a'+i/26)), "1")))
		}
		var running atomic.Int32
		var overlapped atomic.Bool
		var mu sync.Mutex // guards seen
		seen := map[string]int{}
		// Stopped when the test returns, failed or not, so that no
		// consumer outlives it (the bubble would end in a deadlock panic).
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		for range 4 {
			wg.Go(func() {
				for {
					err := q.PopBatch(ctx, 3, func(b Batch) error {
						if running.Add(1) > 1 {
							overlapped.Store(true)
						}
						mu.Lock()
						for _, it := range b.Items {
							seen[it.Key]++
						}
						mu.Unlock()
						// Hold the turn a while (the bubble's time, so no
						// real wait): the other consumers get every chance
						// to take a batch meanwhile, and would overlap this
						// one if Pops did not take turns.
						time.Sleep(time.Millisecond)
						running.Add(-1)
						return nil
					})
					if err != nil {
						return
					}
				}
			})
		}
		// 200 keys in batches of 3 are 67 turns of a millisecond each: after a
		// second of the bubble's time the consumers are asleep in Pop.
		time.Sleep(time.Second)
		synctest.Wait()
		require.Zero(t, q.Stats().Depth)
		require.Zero(t, q.Stats().InFlight)
		q.Close()
		wg.Wait()
		require.False(t, overlapped.Load(), "two process functions ran at once")
		require.Len(t, seen, keys)
		for k, n := range seen {
			require.Equal(t, 1, n, k)
		}
	})
}

// TestInFlightCountsAsApplied checks the rule that makes unlocked Pop safe:
// while a batch is in flight, Delete, Replace and Resync reason as if it
// had already reached KnownObjects, although the consumer has not yet
// written it there.
func TestInFlightCountsAsApplied(t *testing.T) {
	ok := must(t)
	t.Run("delete of a key being added is news", func(t *testing.T) {
		known := newStore()
		q := New(Options{KnownObjects: known})
		ok(q.Add(pod("a", "1")))
		ok(q.Pop(t.Context(), func(b Batch) error {
			ok(q.Delete(pod("a", "2"))) // known does not have "a" yet
			known.apply(b)
			return nil
		}))
		got := items(popAll(t, q, known))
		require.Equal(t, []Item{item("ns/a", del(pod("a", "2")))}, got)
		require.Empty(t, known.ListKeys())
	})
	t.Run("delete of a key being deleted is not", func(t *testing.T) {
		known := newStore(pod("a", "1"))
		q := New(Options{KnownObjects: known})
		ok(q.Delete(pod("a", "1")))
		ok(q.Pop(t.Context(), func(b Batch) error {
			ok(q.Delete(pod("a", "1"))) // known still has "a"
			known.apply(b)
			return nil
		}))
		require.Zero(t, q.queuedUnits())
		require.EqualValues(t, 1, q.Stats().IgnoredDeletes)
	})
	t.Run("relist during an add tombstones the in-flight object", func(t *testing.T) {
		known := newStore()
		q := New(Options{KnownObjects: known})
		ok(q.Add(pod("a", "1")))
		ok(q.Pop(t.Context(), func(b Batch) error {
			ok(q.Replace(nil, ""))
			known.apply(b)
			return nil
		}))
		require.Equal(t, []Item{item("ns/a", tomb(pod("a", "1")))}, items(popAll(t, q, known)))
		require.Empty(t, known.ListKeys())
	})
	t.Run("resync skips a key in flight", func(t *testing.T) {
		known := newStore(pod("a", "1"))
		q := New(Options{KnownObjects: known})
		ok(q.Update(pod("a", "2")))
		ok(q.Pop(t.Context(), func(b Batch) error {
			ok(q.Resync()) // would queue the stale a@1 as Sync
			known.apply(b)
			return nil
		}))
		require.Zero(t, q.queuedUnits())
	})
	t.Run("relist during an atomic relist compares against the one in flight", func(t *testing.T) {
		known := newStore(pod("old", "1"))
		q := New(Options{KnownObjects: known, AtomicRelist: true})
		ok(q.Replace(objs(pod("a", "1")), "5"))
		ok(q.Pop(t.Context(), func(b Batch) error {
			ok(q.Replace(objs(pod("b", "1")), "6"))
			known.apply(b)
			return nil
		}))
		got := popAll(t, q, known)
		require.Len(t, got, 1)
		require.Equal(t, []Item{item("ns/a", tomb(pod("a", "1"))), item("ns/b", repl(pod("b", "1")))}, got[0].Items)
		require.Equal(t, map[string]bool{"ns/b": true}, keySet(known))
	})
}

func TestRequeue(t *testing.T) {
	ok := must(t)
	q := New(Options{})
	ok(q.Add(pod("a", "1")))
	ok(q.Add(pod("b", "1")))
	err := q.Pop(t.Context(), func(b Batch) error {
		ok(q.Update(pod("a", "2"))) // a is in flight: queues behind b
		return ErrRequeue
	})
	require.ErrorIs(t, err, ErrRequeue)
	require.EqualValues(t, 1, q.Stats().Requeued)

	var batches [][]Item
	for q.queuedUnits() > 0 {
		ok(q.PopBatch(t.Context(), 10, func(b Batch) error { batches = append(batches, b.Items); return nil }))
	}
	require.Equal(t, [][]Item{
		{item("ns/a", add(pod("a", "1")))}, // back at the front; a batch never holds a key twice
		{item("ns/b", add(pod("b", "1"))), item("ns/a", upd(pod("a", "2")))},
	}, batches)
}

func TestRequeueKeepsPlaceAndMerges(t *testing.T) {
	ok := must(t)
	q := New(Options{})
	ok(q.Add(pod("a", "1")))
	ok(q.Add(pod("b", "1")))
	require.ErrorIs(t, q.Pop(t.Context(), func(Batch) error { return ErrRequeue }), ErrRequeue)
	ok(q.Update(pod("a", "2"))) // joins the requeued unit at the front
	got := items(popAll(t, q, nil))
	require.Equal(t, []Item{
		item("ns/a", add(pod("a", "1")), upd(pod("a", "2"))),
		item("ns/b", add(pod("b", "1"))),
	}, got)
}

func TestProcessErrorDropsBatchButReportsIt(t *testing.T) {
	ok := must(t)
	q := New(Options{})
	ok(q.Replace(objs(pod("a", "1")), ""))
	boom := errors.New("boom")
	err := q.Pop(t.Context(), func(Batch) error { return boom })
	require.ErrorIs(t, err, boom)
	require.Zero(t, q.queuedUnits())
	s := q.Stats()
	require.EqualValues(t, 1, s.Failed)
	require.EqualValues(t, 1, s.Delivered)
	require.True(t, q.HasSynced(), "the process function returned: the item was processed")
}

func TestProcessPanicRequeues(t *testing.T) {
	ok := must(t)
	q := New(Options{})
	ok(q.Add(pod("a", "1")))
	func() {
		defer func() { require.Equal(t, "kaboom", recover()) }()
		_ = q.Pop(t.Context(), func(Batch) error { panic("kaboom") })
	}()
	require.Equal(t, 1, q.Stats().Depth)
	require.Equal(t, []Item{item("ns/a", add(pod("a", "1")))}, items(popAll(t, q, nil)))
}

func TestPopBatch(t *testing.T) {
	ok := must(t)
	q := New(Options{})
	ok(q.Bookmark("1"))
	for _, n := range []string{"a", "b", "c"} {
		ok(q.Add(pod(n, "2")))
	}
	ok(q.Bookmark("2"))
	ok(q.Add(pod("d", "3")))
	var got []Batch
	for q.queuedUnits() > 0 {
		ok(q.PopBatch(t.Context(), 2, func(b Batch) error { got = append(got, b); return nil }))
	}
	keys := func(b Batch) []string {
		var out []string
		for _, it := range b.Items {
			out = append(out, it.Key)
		}
		return out
	}
	require.Len(t, got, 4)
	require.Equal(t, Batch{ResourceVersion: "1"}, got[0], "a marker at the head comes alone")
	require.Equal(t, []string{"ns/a", "ns/b"}, keys(got[1]))
	require.Empty(t, got[1].ResourceVersion)
	require.Equal(t, []string{"ns/c"}, keys(got[2]))
	require.Equal(t, "2", got[2].ResourceVersion, "a marker right after the run is folded in")
	require.Equal(t, []string{"ns/d"}, keys(got[3]))
}

func TestHasSynced(t *testing.T) {
	ok := must(t)
	cases := []struct {
		name string
		ops  func(q *Queue)
		want bool
	}{
		{"nothing yet", func(*Queue) {}, false},
		{"an add first", func(q *Queue) { ok(q.Add(pod("a", "1"))) }, true},
		{"an ignored delete first", func(q *Queue) { ok(q.Delete(pod("a", "1"))) }, true},
		{"an empty first relist", func(q *Queue) { ok(q.Replace(nil, "1")) }, true},
		{"a first relist not processed", func(q *Queue) { ok(q.Replace(objs(pod("a", "1"), pod("b", "1")), "")) }, false},
		{"a bookmark or resync does not count", func(q *Queue) { ok(q.Bookmark("3")); ok(q.Resync()) }, false},
	}
	for _, atomicMode := range []bool{false, true} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s/atomic=%v", tc.name, atomicMode), func(t *testing.T) {
				q := New(Options{AtomicRelist: atomicMode})
				tc.ops(q)
				require.Equal(t, tc.want, q.HasSynced())
			})
		}
	}
}

// TestHasSyncedWaitsForProcessing checks that HasSynced turns true only
// after the last initial item's process function has returned, not when it
// is popped, and that InInitialList marks exactly the first Replace.
func TestHasSyncedWaitsForProcessing(t *testing.T) {
	for _, atomicMode := range []bool{false, true} {
		t.Run(map[bool]string{false: "per-key", true: "atomic"}[atomicMode], func(t *testing.T) {
			ok := must(t)
			known := newStore(pod("gone", "1"))
			q := New(Options{KnownObjects: known, AtomicRelist: atomicMode})
			ok(q.Replace(objs(pod("a", "1"), pod("b", "1")), "5"))
			ok(q.Add(pod("c", "1"))) // after the first Replace: not initial
			initial := map[string]bool{}
			for q.queuedUnits() > 0 {
				ok(q.Pop(t.Context(), func(b Batch) error {
					require.False(t, q.HasSynced() && len(b.Items) > 0 && b.Items[0].InInitialList,
						"synced while an initial item is being processed")
					for _, it := range b.Items {
						initial[it.Key] = it.InInitialList
					}
					known.apply(b)
					return nil
				}))
			}
			require.True(t, q.HasSynced())
			require.Equal(t, map[string]bool{"ns/a": true, "ns/b": true, "ns/gone": true, "ns/c": false}, initial)
		})
	}
}

// TestStats runs in a synctest bubble, so that the ages it reads are exactly
// the time it slept.
func TestStats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ok := must(t)
		q := New(Options{KnownObjects: newStore(pod("x", "1"))})
		require.Equal(t, Stats{}, q.Stats())
		ok(q.Add(pod("a", "1")))
		time.Sleep(time.Second)
		ok(q.Add(pod("b", "1")))
		ok(q.Update(pod("a", "2")))
		ok(q.Update(pod("a", "3")))   // compacted
		ok(q.Delete(pod("zzz", "1"))) // ignored
		time.Sleep(2 * time.Second)
		s := q.Stats()
		require.Equal(t, 2, s.Depth)
		require.Equal(t, 3, s.Deltas) // a: Added, Updated; b: Added
		require.Equal(t, 3*time.Second, s.OldestAge)
		require.EqualValues(t, 4, s.Enqueued)
		require.EqualValues(t, 1, s.Coalesced)
		require.EqualValues(t, 1, s.IgnoredDeletes)
		ok(q.Pop(t.Context(), func(Batch) error {
			in := q.Stats()
			require.Equal(t, 1, in.InFlight)
			require.Equal(t, 1, in.Depth)
			require.Equal(t, 2*time.Second, in.OldestAge, "b is now the oldest")
			return nil
		}))
		s = q.Stats()
		require.Zero(t, s.InFlight)
		require.EqualValues(t, 1, s.Delivered)
	})
}
