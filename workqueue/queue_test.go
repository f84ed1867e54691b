package workqueue_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed31a95821/informer/workqueue"
)

// step is one call in a table test: add (with a priority), get, done,
// shutdown. get names the item it must return ("" for shutdown).
type step struct {
	op       string
	item     string
	priority workqueue.Priority
}

func run(t *testing.T, q *workqueue.Queue[string], steps []step) {
	t.Helper()
	for i, s := range steps {
		switch s.op {
		case "add":
			q.AddWithPriority(s.item, s.priority)
		case "get":
			got, shutdown := q.Get()
			if s.item == "" {
				require.True(t, shutdown, "step %d: get returned %q, want shutdown", i, got)
			} else {
				require.False(t, shutdown, "step %d", i)
				require.Equal(t, s.item, got, "step %d", i)
			}
		case "done":
			q.Done(s.item)
		case "shutdown":
			q.ShutDown()
		default:
			t.Fatalf("step %d: unknown op %q", i, s.op)
		}
	}
}

// The rules of the queue, one table row each.
func TestQueueRules(t *testing.T) {
	low := workqueue.PriorityLow
	tests := []struct {
		name      string
		steps     []step
		wantLen   int
		wantAdds  uint64
		wantProcs int
	}{
		{"first in, first out", []step{{op: "add", item: "a"}, {op: "add", item: "b"}, {op: "get", item: "a"}, {op: "get", item: "b"}}, 0, 2, 2},
		{"adds before a get are one item", []step{{op: "add", item: "a"}, {op: "add", item: "a"}, {op: "add", item: "b"}, {op: "add", item: "a"}}, 2, 2, 0},
		{"a re-add keeps the first position", []step{{op: "add", item: "a"}, {op: "add", item: "b"}, {op: "add", item: "a"}, {op: "get", item: "a"}}, 1, 2, 1},
		{"an add while processing waits for done", []step{{op: "add", item: "a"}, {op: "get", item: "a"}, {op: "add", item: "a"}}, 0, 2, 1},
		{"done puts a re-added item back", []step{{op: "add", item: "a"}, {op: "get", item: "a"}, {op: "add", item: "a"}, {op: "add", item: "b"}, {op: "done", item: "a"}, {op: "get", item: "b"}, {op: "get", item: "a"}}, 0, 3, 2},
		{"done of an unknown item is ignored", []step{{op: "done", item: "x"}, {op: "add", item: "a"}}, 1, 1, 0},
		{"higher priority first", []step{{op: "add", item: "old", priority: low}, {op: "add", item: "live"}, {op: "get", item: "live"}, {op: "get", item: "old"}}, 0, 2, 2},
		{"a live add raises a low item", []step{{op: "add", item: "a", priority: low}, {op: "add", item: "b", priority: low}, {op: "add", item: "c"}, {op: "add", item: "b"}, {op: "get", item: "c"}, {op: "get", item: "b"}, {op: "get", item: "a"}}, 0, 3, 3},
		{"a low add does not lower", []step{{op: "add", item: "a"}, {op: "add", item: "b", priority: low}, {op: "add", item: "a", priority: low}, {op: "get", item: "a"}, {op: "get", item: "b"}}, 0, 2, 2},
		{"the stale entry of a raise is skipped", []step{{op: "add", item: "a", priority: low}, {op: "add", item: "a"}, {op: "get", item: "a"}, {op: "done", item: "a"}, {op: "add", item: "b", priority: low}, {op: "get", item: "b"}}, 0, 2, 1},
		{"a raise's stale entry does not jump the line", []step{{op: "add", item: "x", priority: low}, {op: "add", item: "x"}, {op: "get", item: "x"}, {op: "done", item: "x"}, {op: "add", item: "y", priority: low}, {op: "add", item: "x", priority: low}, {op: "get", item: "y"}, {op: "get", item: "x"}}, 0, 3, 2},
		{"shutdown refuses adds, hands out what is ready", []step{{op: "add", item: "a"}, {op: "shutdown"}, {op: "add", item: "b"}, {op: "get", item: "a"}, {op: "get"}}, 0, 1, 1},
		{"shutdown with nothing ready", []step{{op: "shutdown"}, {op: "get"}, {op: "get"}}, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var q workqueue.Queue[string] // the zero value is ready to use
			run(t, &q, tt.steps)
			s := q.Stats()
			assert.Equal(t, tt.wantLen, q.Len(), "Len")
			assert.Equal(t, tt.wantLen, s.Depth, "Depth")
			assert.Equal(t, tt.wantAdds, s.Adds, "Adds")
			assert.Equal(t, tt.wantProcs, s.Processing, "Processing")
		})
	}
}

// TestQueueModel drives the queue with random operations from several
// goroutines and checks the invariants against a model: no item is handed
// to two workers at once, every item added is handed out after its last add,
// and nothing is handed out that was not added.
func TestQueueModel(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	q := workqueue.New[int](workqueue.Options[int]{})
	var (
		mu        sync.Mutex // guards the model below
		inHand    = map[int]bool{}
		pending   = map[int]int{} // item -> adds not yet followed by a Get
		handedOut int
	)
	const workers, items, adds = 4, 20, 4000
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for {
				item, shutdown := q.Get()
				if shutdown {
					return
				}
				mu.Lock()
				if inHand[item] {
					t.Errorf("item %d handed to two workers at once", item)
				}
				inHand[item] = true
				pending[item] = 0
				handedOut++
				mu.Unlock()
				if w%2 == 0 {
					runtime.Gosched() // let adds land while the item is in hand
				}
				mu.Lock()
				inHand[item] = false
				mu.Unlock()
				q.Done(item)
			}
		})
	}
	r := rand.New(rand.NewPCG(seed, seed))
	for range adds {
		item := r.IntN(items)
		mu.Lock()
		pending[item]++
		mu.Unlock()
		if r.IntN(4) == 0 {
			q.AddWithPriority(item, workqueue.PriorityLow)
		} else {
			q.Add(item)
		}
	}
	q.ShutDownWithDrain()
	wg.Wait()
	for item, n := range pending {
		assert.Zero(t, n, "item %d: %d adds never followed by a Get", item, n)
	}
	assert.LessOrEqual(t, handedOut, adds)
	assert.Equal(t, uint64(handedOut), q.Stats().Adds, "every counted add is handed out once")
}

// Two ShutDownWithDrain calls wait for the last item in hand; its Done
// must wake both, not one: when the item was added again while in hand
// (Done puts it back) and when it was not (Done forgets it).
func TestShutDownWithDrainWakesEveryDrainer(t *testing.T) {
	for _, readded := range []bool{true, false} {
		t.Run(fmt.Sprintf("added again while in hand: %v", readded), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var q workqueue.Queue[string]
				q.Add("a")
				item, _ := q.Get()
				if readded {
					q.Add("a")
				}
				var drained sync.WaitGroup
				for range 2 {
					drained.Go(q.ShutDownWithDrain)
				}
				synctest.Wait() // both drainers wait
				q.Done(item)
				drained.Wait() // a drainer not woken would be reported as a deadlock
			})
		})
	}
}

// ShutDownWithDrain waits for the items in hand; ShutDown does not.
func TestShutDownWithDrainWaitsForDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var q workqueue.Queue[string]
		q.Add("a")
		item, _ := q.Get()
		drained := make(chan struct{})
		go func() {
			q.ShutDownWithDrain()
			close(drained)
		}()
		synctest.Wait()
		select {
		case <-drained:
			t.Fatal("drain returned with an item in hand")
		default:
		}
		assert.True(t, q.ShuttingDown())
		q.Done(item)
		synctest.Wait()
		select {
		case <-drained:
		default:
			t.Fatal("drain did not return after Done")
		}
	})
}

// A worker blocked in Get is released by ShutDown.
func TestShutDownReleasesGet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var q workqueue.Queue[string]
		got := make(chan bool)
		go func() {
			_, shutdown := q.Get()
			got <- shutdown
		}()
		synctest.Wait()
		q.ShutDown()
		assert.True(t, <-got)
	})
}

// Stats measures how long items have been in hand, from its first call on.
func TestStatsRunningTimes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var q workqueue.Queue[string]
		q.Add("a")
		q.Add("b")
		q.Add("c")
		early, _ := q.Get()
		time.Sleep(time.Hour) // fake time, inside the bubble
		s := q.Stats()
		assert.Zero(t, s.LongestRunning, "the first call starts the timing")
		assert.Equal(t, 1, s.Processing)
		a, _ := q.Get()
		time.Sleep(3 * time.Second)
		b, _ := q.Get()
		time.Sleep(time.Second)
		s = q.Stats()
		assert.Equal(t, 4*time.Second, s.LongestRunning, "early counts from the first Stats, a from its Get")
		assert.Equal(t, 4*time.Second+4*time.Second+time.Second, s.UnfinishedWork)
		q.Done(early)
		q.Done(a)
		assert.Equal(t, time.Second, q.Stats().LongestRunning)
		q.Done(b)
		assert.Zero(t, q.Stats().LongestRunning)
	})
}

func TestOrderAcrossPriorities(t *testing.T) {
	var q workqueue.Queue[string]
	for i := range 5 {
		q.AddWithPriority(fmt.Sprint("initial-", i), workqueue.PriorityLow)
	}
	q.Add("live-0")
	q.AddWithPriority("urgent", 10)
	q.Add("live-1")
	var got []string
	for q.Len() > 0 {
		item, _ := q.Get()
		got = append(got, item)
		q.Done(item)
	}
	want := []string{"urgent", "live-0", "live-1", "initial-0", "initial-1", "initial-2", "initial-3", "initial-4"}
	assert.True(t, slices.Equal(want, got), "got %v", got)
}

// ShutDown ends a ShutDownWithDrain that waits for items in hand: the
// caller asked the queue to stop now, and the drainer must not outlive it
// waiting for a worker that may never call Done.
func TestShutDownEndsDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var q workqueue.Queue[string]
		q.Add("a")
		item, _ := q.Get()
		drained := make(chan struct{})
		go func() {
			q.ShutDownWithDrain()
			close(drained)
		}()
		synctest.Wait() // the drainer waits for item
		q.ShutDown()
		synctest.Wait()
		select {
		case <-drained:
		default:
			t.Error("ShutDown did not end the drain")
			q.Done(item) // let the drainer go, so the bubble can end
			<-drained
		}
		q.Done(item) // a Done after the drain ended is harmless
	})
}
