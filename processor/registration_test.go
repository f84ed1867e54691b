package processor

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRemoveWaitsForHandlerAndIsIdempotent(t *testing.T) {
	p := New(Options{})
	g, other := newGate(t), newRecorder()
	reg, err := p.AddHandler(g, HandlerOptions{}, nil)
	require.NoError(t, err)
	_, err = p.AddHandler(other, HandlerOptions{}, nil)
	require.NoError(t, err)
	startProcessor(t, p)

	p.Distribute(addOf("ns", "a"), false)
	p.Distribute(addOf("ns", "b"), false)
	g.waitEntered(t)

	done := reg.Remove()
	require.False(t, isClosed(done), "the handler is still inside Handle")
	require.Equal(t, done, reg.Remove(), "a second Remove returns the same channel")
	p.Distribute(addOf("ns", "c"), false)

	g.open(t, 1)
	waitClosed(t, done, "the removed handler's goroutine to finish")
	waitClosed(t, reg.Remove(), "Remove after the goroutine finished")
	require.Equal(t, []string{"ns/a", "ns/b", "ns/c"}, other.nextKeys(t, 3), "others are unaffected")
	st := reg.Stats()
	assert.EqualValues(t, 1, st.Delivered, "b was dropped and c never reached it")
	assert.Zero(t, st.Pending)
	select {
	case n := <-g.entered:
		t.Fatalf("removed handler got %q", n.Key)
	default:
	}
}

func TestRemoveBeforeRun(t *testing.T) {
	p := New(Options{})
	removed, kept := newRecorder(), newRecorder()
	reg, err := p.AddHandler(removed, HandlerOptions{}, nil)
	require.NoError(t, err)
	_, err = p.AddHandler(kept, HandlerOptions{}, nil)
	require.NoError(t, err)
	p.Distribute(addOf("ns", "a"), false)
	require.Equal(t, 1, reg.Stats().Pending)

	waitClosed(t, reg.Remove(), "Remove of a never-started handler")
	assert.Zero(t, reg.Stats().Pending, "its buffer was dropped")
	startProcessor(t, p)
	p.Distribute(addOf("ns", "b"), false)
	require.Equal(t, []string{"ns/a", "ns/b"}, kept.nextKeys(t, 2))
	removed.none(t)
}

func TestHandlerCanRemoveItself(t *testing.T) {
	p := New(Options{})
	var reg *Registration
	var mu sync.Mutex // guards reg, which is set after AddHandler returns
	calls := make(chan string, 10)
	removed := make(chan (<-chan struct{}), 10)
	h := HandlerFunc(func(n Notification) {
		calls <- n.Key
		mu.Lock()
		defer mu.Unlock()
		removed <- reg.Remove() // must not block; waiting on the channel here would
	})
	mu.Lock()
	r, err := p.AddHandler(h, HandlerOptions{}, nil)
	require.NoError(t, err)
	reg = r
	mu.Unlock()
	startProcessor(t, p)
	p.Distribute(addOf("ns", "a"), false)
	p.Distribute(addOf("ns", "b"), false)
	select {
	case done := <-removed:
		waitClosed(t, done, "self-removal")
	case <-time.After(waitFor):
		t.Fatal("the handler did not remove itself")
	}
	require.Equal(t, "ns/a", <-calls)
	require.Empty(t, calls, "nothing after the self-removal")
}

// TestStatsWithFakeClock runs in a synctest bubble: the handler's sleeps are
// the only time that passes, so the handling durations are exact.
func TestStatsWithFakeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := New(Options{})
		cost := map[string]time.Duration{"ns/a": 5 * time.Millisecond, "ns/b": 20 * time.Millisecond, "ns/c": 10 * time.Millisecond}
		h := HandlerFunc(func(n Notification) { time.Sleep(cost[n.Key]) })
		reg, err := p.AddHandler(h, HandlerOptions{Name: "timed"}, nil)
		require.NoError(t, err)
		for _, k := range []string{"a", "b", "c"} {
			p.Distribute(addOf("ns", k), false)
		}
		p.MarkSynced()
		before := reg.Stats()
		assert.Equal(t, HandlerStats{Name: "timed", Pending: 3, MaxPending: 3, BufferCapacity: pageLen}, before)

		startProcessor(t, p)
		waitClosed(t, reg.Synced(), "sync")
		assert.Equal(t, HandlerStats{
			Name:               "timed",
			Pending:            0,
			MaxPending:         3,
			Delivered:          3,
			LastHandleDuration: 10 * time.Millisecond,
			MaxHandleDuration:  20 * time.Millisecond,
			BufferCapacity:     pageLen,
		}, reg.Stats())
	})
}

// TestConcurrentUse distributes a numbered stream while other goroutines add,
// remove and inspect handlers. Every handler must see a strictly increasing
// subsequence, and the permanent handler the whole stream. Run with -race.
// TestConcurrentUse distributes while other goroutines add, remove and
// resync handlers. Every handler must see the stream from where it joined
// on, in order, without a gap or a duplicate, and those still registered
// must reach its end. Run it with -race.
func TestConcurrentUse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		seed := time.Now().UnixNano()
		t.Logf("seed=%d", seed)
		rng := rand.New(rand.NewPCG(uint64(seed), 1))
		p := New(Options{})
		const total = 3000
		var failed sync.Once
		fail := make(chan string, 1)
		// orderChecker returns a handler that checks that each notification
		// follows the previous one, and the number of the last one it saw.
		orderChecker := func(name string) (Handler, *atomic.Int64) {
			var last atomic.Int64
			last.Store(-1)
			return HandlerFunc(func(n Notification) {
				var seq int64
				fmt.Sscanf(n.Key, "ns/%d", &seq)
				if prev := last.Load(); prev >= 0 && seq != prev+1 {
					failed.Do(func() { fail <- fmt.Sprintf("%s got %d after %d", name, seq, prev) })
				}
				last.Store(seq)
			}), &last
		}
		h, _ := orderChecker("permanent")
		permanent, err := p.AddHandler(h, HandlerOptions{}, nil)
		require.NoError(t, err)
		startProcessor(t, p)

		var wg sync.WaitGroup
		wg.Go(func() {
			for i := range total {
				p.Distribute(addOf("ns", fmt.Sprint(i)), false)
				if i == total/2 {
					p.MarkSynced()
				}
			}
		})
		churnSeeds := []uint64{rng.Uint64(), rng.Uint64()}
		kept := make([][]*atomic.Int64, len(churnSeeds))
		for w, s := range churnSeeds {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(s, 2))
				var regs []*Registration
				lasts := map[*Registration]*atomic.Int64{}
				for i := range 50 {
					h, last := orderChecker(fmt.Sprintf("w%d-%d", w, i))
					reg, err := p.AddHandler(h, HandlerOptions{ResyncPeriod: time.Second}, nil)
					if err != nil {
						failed.Do(func() { fail <- err.Error() })
						return
					}
					regs = append(regs, reg)
					lasts[reg] = last
					_ = reg.Stats()
					p.ShouldResync(time.Now())
					if r.IntN(2) == 0 {
						victim := regs[r.IntN(len(regs))]
						<-victim.Remove()
						delete(lasts, victim)
					}
				}
				for _, last := range lasts {
					kept[w] = append(kept[w], last)
				}
			})
		}
		wg.Wait()
		synctest.Wait() // every handler is idle: it has handled what it was told
		require.EqualValues(t, total, permanent.Stats().Delivered)
		require.True(t, permanent.HasSynced())
		for _, lasts := range kept {
			for _, last := range lasts {
				// A handler that joined after the last notification saw none.
				l := last.Load()
				require.True(t, l == total-1 || l == -1, "last seen %d", l)
			}
		}
		select {
		case msg := <-fail:
			t.Fatal(msg)
		default:
		}
	})
}

// TestRemovedBeforeSyncNeverSyncs removes a handler while it handles the
// last object before its sync point, and checks that it never reports
// HasSynced. The sync point is the end of the replay for a handler added
// after MarkSynced, and the marker in the journal for one added before.
func TestRemovedBeforeSyncNeverSyncs(t *testing.T) {
	for _, late := range []bool{true, false} {
		t.Run(map[bool]string{true: "late, in its replay", false: "early, before the marker"}[late], func(t *testing.T) {
			p := New(Options{})
			g := newGate(t)
			var reg *Registration
			var err error
			if late {
				startProcessor(t, p)
				p.MarkSynced()
				reg, err = p.AddHandler(g, HandlerOptions{}, stateOf(pod("ns", "a")))
			} else {
				reg, err = p.AddHandler(g, HandlerOptions{}, nil)
				startProcessor(t, p)
				p.Distribute(addOf("ns", "a"), false)
				p.MarkSynced()
			}
			require.NoError(t, err)
			g.waitEntered(t) // handling its only object
			done := reg.Remove()
			g.open(t, 1)
			waitClosed(t, done, "the removed handler's goroutine")
			assert.False(t, reg.HasSynced(), "removed before it synced")
		})
	}
}

// TestMaxPendingSeesTheBacklogDuringReplay checks HandlerStats.MaxPending's
// promise, that it misses a peak by at most one batch, for a late handler:
// the live stream piles up behind its initial replay, and nobody calls Stats
// until the end.
func TestMaxPendingSeesTheBacklogDuringReplay(t *testing.T) {
	p := New(Options{})
	startProcessor(t, p)
	p.MarkSynced()
	const initial, live = 4 * batchLen, 4 * batchLen
	var state orderedState
	for i := range initial {
		state = append(state, stateOf(pod("init", fmt.Sprint(i)))...)
	}
	g := newGate(t)
	reg, err := p.AddHandler(g, HandlerOptions{}, state)
	require.NoError(t, err)
	g.waitEntered(t) // stuck on its first replayed object
	for i := range live {
		p.Distribute(addOf("ns", fmt.Sprint(i)), false)
	}
	// The peak is now: nothing handled, initial+live owed.
	close(g.release)
	for range initial + live - 1 {
		g.waitEntered(t)
	}
	assert.GreaterOrEqual(t, reg.Stats().MaxPending, initial+live-batchLen)
}
