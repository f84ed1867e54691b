package processor

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestDeliversInOrderToEveryHandler(t *testing.T) {
	p := New(Options{})
	a, b := newRecorder(), newRecorder()
	_, err := p.AddHandler(a, HandlerOptions{Name: "a"}, nil)
	require.NoError(t, err)
	_, err = p.AddHandler(b, HandlerOptions{Name: "b"}, nil)
	require.NoError(t, err)

	// Notifications distributed before Run wait in the buffers.
	p.Distribute(addOf("ns", "before"), false)
	startProcessor(t, p)
	for i := range 200 {
		p.Distribute(addOf("ns", fmt.Sprint(i)), false)
	}
	for _, r := range []*recorder{a, b} {
		require.Equal(t, "ns/before", r.next(t).Key)
		for i := range 200 {
			n := r.next(t)
			require.Equal(t, fmt.Sprintf("ns/%d", i), n.Key)
			require.Equal(t, Add, n.Type)
		}
	}
}

// TestSlowHandlerDoesNotDelayOthers blocks one handler inside Handle and
// checks that Distribute returns and the other handler receives everything.
func TestSlowHandlerDoesNotDelayOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := New(Options{})
		slow, fast := newGate(t), newRecorder()
		slowReg, err := p.AddHandler(slow, HandlerOptions{Name: "slow"}, nil)
		require.NoError(t, err)
		_, err = p.AddHandler(fast, HandlerOptions{Name: "fast"}, nil)
		require.NoError(t, err)
		startProcessor(t, p)

		const n = 1000
		for i := range n {
			p.Distribute(addOf("ns", fmt.Sprint(i)), false) // must not block on slow
		}
		slow.waitEntered(t) // slow is now stuck in its first Handle
		require.Len(t, fast.nextKeys(t, n), n, "the fast handler got everything while the slow one is stuck")

		st := slowReg.Stats()
		assert.Equal(t, n, st.Pending, "the one in progress plus the buffered ones")
		assert.Equal(t, n, st.MaxPending)
		assert.Zero(t, st.Delivered)

		slow.open(t, 1)
		for range n - 1 {
			slow.waitEntered(t)
			slow.open(t, 1)
		}
		synctest.Wait() // the handler returned from the last one
		require.EqualValues(t, n, slowReg.Stats().Delivered)
		assert.Zero(t, slowReg.Stats().Pending)
	})
}

// TestBufferCapacityShrinksAfterBurst is kubernetes#122067 at the processor
// level: a handler's buffer grows during a burst and shrinks once drained.
// The handler keeps every update, so that the whole burst is in the
// journal: with the default bound it would go to its backlog instead (see
// overflow_test.go).
func TestBufferCapacityShrinksAfterBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := New(Options{})
		g := newGate(t)
		reg, err := p.AddHandler(g, HandlerOptions{KeepAllUpdates: true}, nil)
		require.NoError(t, err)
		startProcessor(t, p)

		const burst = 20_000
		for i := range burst {
			p.Distribute(addOf("ns", fmt.Sprint(i)), false)
		}
		g.waitEntered(t)
		grown := reg.Stats().BufferCapacity
		require.GreaterOrEqual(t, grown, burst-batchLen, "the backlog is buffered")

		// Let the handler drain by closing the gate's release channel: every
		// further Handle returns at once.
		close(g.release)
		synctest.Wait() // the handler drained the burst
		require.EqualValues(t, burst, reg.Stats().Delivered)
		st := reg.Stats()
		assert.LessOrEqual(t, st.BufferCapacity, 2*pageLen, "capacity fell back from %d", grown)
		assert.Equal(t, burst, st.MaxPending)
		assert.Zero(t, st.Pending)
	})
}

func TestPanicIsRecoveredReportedAndHandlerSyncs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := newErrSink()
		p := New(Options{OnError: sink.OnError})
		rec := newRecorder()
		h := HandlerFunc(func(n Notification) {
			switch n.Key {
			case "ns/bad":
				panic("boom")
			case "ns/eof":
				panic(io.EOF)
			}
			rec.Handle(n)
		})
		reg, err := p.AddHandler(h, HandlerOptions{Name: "fragile"}, nil)
		require.NoError(t, err)

		for _, name := range []string{"a", "bad", "b", "eof"} {
			n := addOf("ns", name)
			n.InInitialList = true
			p.Distribute(n, false)
		}
		p.MarkSynced()
		p.Distribute(addOf("ns", "live"), false)
		startProcessor(t, p)

		waitClosed(t, reg.Synced(), "the panicking handler to sync")
		require.True(t, reg.HasSynced())
		require.Equal(t, []string{"ns/a", "ns/b", "ns/live"}, rec.nextKeys(t, 3), "the handler kept running after each panic")

		var pe *HandlerPanicError
		require.ErrorAs(t, sink.next(t), &pe)
		assert.Equal(t, "fragile", pe.Handler)
		assert.Equal(t, "ns/bad", pe.Key)
		assert.Equal(t, Add, pe.Type)
		assert.Equal(t, "boom", pe.Value)
		assert.Contains(t, string(pe.Stack), "TestPanicIsRecoveredReportedAndHandlerSyncs", "the stack shows where it panicked")
		assert.Contains(t, pe.Error(), `"fragile"`)
		assert.Contains(t, pe.Error(), `"ns/bad"`)

		err = sink.next(t)
		require.ErrorIs(t, err, io.EOF, "an error panic value is unwrapped")

		// The recorder hears "ns/live" from inside Handle; the counters are
		// updated just after Handle returns, so wait for the handler to be
		// idle.
		synctest.Wait()
		require.EqualValues(t, 5, reg.Stats().Delivered)
		assert.EqualValues(t, 2, reg.Stats().Panics)
	})
}

// TestHasSyncedWaitsForEveryEarlierNotification checks that HasSynced turns
// true exactly when the handler has handled what preceded MarkSynced, and
// that later notifications do not hold it back.
func TestHasSyncedWaitsForEveryEarlierNotification(t *testing.T) {
	p := New(Options{})
	g := newGate(t)
	reg, err := p.AddHandler(g, HandlerOptions{}, nil)
	require.NoError(t, err)
	startProcessor(t, p)

	p.Distribute(addOf("ns", "1"), false)
	p.Distribute(addOf("ns", "2"), false)
	require.False(t, reg.HasSynced(), "not synced before MarkSynced")
	p.MarkSynced()
	p.MarkSynced() // idempotent: one marker only
	p.Distribute(addOf("ns", "3"), false)

	require.Equal(t, "ns/1", g.waitEntered(t).Key)
	require.False(t, reg.HasSynced(), "ns/1 is in progress")
	g.open(t, 1)
	require.Equal(t, "ns/2", g.waitEntered(t).Key)
	require.False(t, reg.HasSynced(), "ns/2 is in progress")
	g.open(t, 1)
	require.Equal(t, "ns/3", g.waitEntered(t).Key)
	// ns/3 came after MarkSynced, so the marker was reached before it.
	require.True(t, reg.HasSynced(), "synced while ns/3, distributed after MarkSynced, is in progress")
	g.open(t, 1)
}

func TestNeverSyncedWithoutMarkSynced(t *testing.T) {
	p := New(Options{})
	rec := newRecorder()
	reg, err := p.AddHandler(rec, HandlerOptions{}, nil)
	require.NoError(t, err)
	startProcessor(t, p)
	p.Distribute(addOf("ns", "a"), false)
	rec.next(t)
	require.False(t, reg.HasSynced())
}

// TestLateHandlerReplaysThenGoesLive adds a handler while running: it gets
// the snapshot as initial Adds on its own goroutine, then the live stream.
func TestLateHandlerReplaysThenGoesLive(t *testing.T) {
	p := New(Options{})
	early := newRecorder()
	_, err := p.AddHandler(early, HandlerOptions{}, nil)
	require.NoError(t, err)
	startProcessor(t, p)
	p.Distribute(addOf("ns", "a"), false)
	p.Distribute(addOf("ns", "b"), false)
	p.MarkSynced()
	early.nextKeys(t, 2)

	g := newGate(t)
	snapshot := stateOf(pod("ns", "a"), pod("ns", "b"))
	late, err := p.AddHandler(g, HandlerOptions{Name: "late"}, snapshot)
	require.NoError(t, err) // returned although the replay is stuck below

	first := g.waitEntered(t)
	assert.Equal(t, Notification{Type: Add, Key: "ns/a", Object: snapshot[0].obj, InInitialList: true}, first)
	// The pipeline keeps flowing while the late handler replays.
	upd := Notification{Type: Update, Key: "ns/b", Object: pod("ns", "b"), Old: snapshot[1].obj}
	p.Distribute(upd, false)
	require.Equal(t, "ns/b", early.next(t).Key)
	assert.False(t, late.HasSynced(), "still replaying")
	assert.Equal(t, 3, late.Stats().Pending, "two replayed objects and one live notification")

	g.open(t, 1)
	second := g.waitEntered(t)
	assert.Equal(t, "ns/b", second.Key)
	assert.True(t, second.InInitialList)
	g.open(t, 1)
	live := g.waitEntered(t)
	assert.Equal(t, upd, live)
	assert.True(t, late.HasSynced(), "synced once the replay is done")
	g.open(t, 1)
}

func TestLateHandlerSyncsOnlyAfterMarkSynced(t *testing.T) {
	p := New(Options{})
	startProcessor(t, p)
	rec := newRecorder()
	reg, err := p.AddHandler(rec, HandlerOptions{}, stateOf(pod("ns", "a")))
	require.NoError(t, err)
	require.True(t, rec.next(t).InInitialList)
	require.False(t, reg.HasSynced(), "upstream has not synced yet")
	p.MarkSynced()
	waitClosed(t, reg.Synced(), "sync after MarkSynced")
}

// The keys a late handler hears are the state's own (the cache's keys), not
// recomputed from the objects.
func TestReplayUsesTheStatesKeys(t *testing.T) {
	p := New(Options{})
	startProcessor(t, p)
	p.MarkSynced()
	rec := newRecorder()
	reg, err := p.AddHandler(rec, HandlerOptions{Name: "h"}, Objects{"custom:a": pod("ns", "a"), "custom:c": pod("ns", "c")})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"custom:a", "custom:c"}, rec.nextKeys(t, 2))
	waitClosed(t, reg.Synced(), "sync after the replay")
	assert.Zero(t, reg.Stats().Pending)
}

func TestAddHandlerErrors(t *testing.T) {
	p := New(Options{})
	_, err := p.AddHandler(nil, HandlerOptions{}, nil)
	require.ErrorIs(t, err, ErrNilHandler)
	var nilFunc HandlerFunc // a nil function would panic on every notification
	_, err = p.AddHandler(nilFunc, HandlerOptions{}, nil)
	require.ErrorIs(t, err, ErrNilHandler)
	_, err = p.AddHandler(newRecorder(), HandlerOptions{ResyncPeriod: -1}, nil)
	require.ErrorIs(t, err, ErrNegativeResyncPeriod)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// Cancelled but Run not yet returned (here: not yet called) is a
	// started-then-stopping processor once Run runs; after Run it is stopped.
	p.Run(ctx)
	_, err = p.AddHandler(newRecorder(), HandlerOptions{}, nil)
	require.ErrorIs(t, err, ErrStopped)
}

func TestAddHandlerWhileStoppingReturnsErrStopped(t *testing.T) {
	p := New(Options{})
	g := newGate(t)
	_, err := p.AddHandler(g, HandlerOptions{}, nil)
	require.NoError(t, err)
	cancel, runDone := startProcessor(t, p)
	p.Distribute(addOf("ns", "a"), false)
	g.waitEntered(t)
	cancel() // Run cannot return: g is stuck in Handle
	_, err = p.AddHandler(newRecorder(), HandlerOptions{}, nil)
	require.ErrorIs(t, err, ErrStopped)
	require.False(t, isClosed(runDone), "Run waits for the handler in progress")
	g.open(t, 1)
	waitClosed(t, runDone, "Run to return")
}

// TestRunDropsPendingOnStop checks that Run waits for the Handle in progress
// but drops what is still buffered.
func TestRunDropsPendingOnStop(t *testing.T) {
	p := New(Options{})
	g := newGate(t)
	reg, err := p.AddHandler(g, HandlerOptions{}, nil)
	require.NoError(t, err)
	cancel, runDone := startProcessor(t, p)
	for i := range 5 {
		p.Distribute(addOf("ns", fmt.Sprint(i)), false)
	}
	g.waitEntered(t)
	cancel()
	g.open(t, 1)
	waitClosed(t, runDone, "Run to return")
	goleak.VerifyNone(t) // no handler goroutine outlives Run
	waitClosed(t, reg.Remove(), "done after Run returned")
	st := reg.Stats()
	assert.EqualValues(t, 1, st.Delivered)
	assert.Zero(t, st.Pending, "the rest was dropped")
	p.Distribute(addOf("ns", "late"), false) // harmless after stop
	assert.Zero(t, reg.Stats().Pending)
}

func TestRunTwiceReturnsAtOnce(t *testing.T) {
	p := New(Options{})
	rec := newRecorder()
	_, err := p.AddHandler(rec, HandlerOptions{}, nil)
	require.NoError(t, err)
	startProcessor(t, p)
	p.Distribute(addOf("ns", "a"), false)
	rec.next(t)                 // the handler runs, so the first Run has started
	p.Run(context.Background()) // would block forever if it ran again
}

func TestGeneratedNames(t *testing.T) {
	p := New(Options{})
	a, err := p.AddHandler(newRecorder(), HandlerOptions{}, nil)
	require.NoError(t, err)
	b, err := p.AddHandler(newRecorder(), HandlerOptions{Name: "named"}, nil)
	require.NoError(t, err)
	c, err := p.AddHandler(newRecorder(), HandlerOptions{}, nil)
	require.NoError(t, err)
	assert.Equal(t, "handler-1", a.Name())
	assert.Equal(t, "named", b.Stats().Name)
	assert.Equal(t, "handler-3", c.Name())
	assert.True(t, strings.HasPrefix(EventType(7).String(), "EventType("))
	assert.Equal(t, "Delete", Delete.String())
}

// TestDistributeAllocatesNothingPerNotification checks the allocation
// profile of Distribute: the notification is stored by value in the shared
// journal, whose pages hold pageLen of them, so ten handlers cost no
// allocation per notification, and a resync notification that finds nobody
// due costs nothing at all.
func TestDistributeAllocatesNothingPerNotification(t *testing.T) {
	p := New(Options{})
	for range 10 {
		_, err := p.AddHandler(newRecorder(), HandlerOptions{}, nil)
		require.NoError(t, err)
	}
	n := addOf("ns", "a")
	assert.Zero(t, testing.AllocsPerRun(100, func() { p.Distribute(n, true) }), "nobody is due")
	made := p.j.made()
	allocs := testing.AllocsPerRun(4*pageLen, func() { p.Distribute(n, false) })
	assert.Zero(t, allocs, "less than one allocation per notification")
	assert.Equal(t, 4, p.j.made()-made, "one page per pageLen notifications nobody has read yet")
}

// TestRemovedStuckHandlerDoesNotHoldTheJournal removes a handler while it
// is stuck in Handle: from then on it must not keep the pages distributed
// after its removal alive, or one stuck handler would make the journal grow
// without bound while the others keep up.
func TestRemovedStuckHandlerDoesNotHoldTheJournal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := New(Options{})
		stuck, live := newGate(t), newRecorder()
		reg, err := p.AddHandler(stuck, HandlerOptions{}, nil)
		require.NoError(t, err)
		liveReg, err := p.AddHandler(live, HandlerOptions{}, nil)
		require.NoError(t, err)
		startProcessor(t, p)
		p.Distribute(addOf("ns", "first"), false)
		stuck.waitEntered(t)
		done := reg.Remove()

		made := p.j.made()
		for i := range 50 * pageLen {
			p.Distribute(addOf("ns", strconv.Itoa(i)), false)
			if i%pageLen == 0 { // the live handler catches up, a page at a time
				want := uint64(i + 2)
				synctest.Wait()
				require.Equal(t, want, liveReg.Stats().Delivered)
			}
		}
		assert.LessOrEqual(t, p.j.made()-made, spareLen+4, "pages were reused, not kept for the removed handler")

		close(stuck.release)
		waitClosed(t, done, "the removed handler's goroutine")
		assert.Zero(t, reg.Stats().Pending)
		assert.Zero(t, reg.Stats().BufferCapacity)
	})
}

func TestLenCountsRegisteredHandlers(t *testing.T) {
	p := New(Options{})
	assert.Zero(t, p.Len())
	a, err := p.AddHandler(newRecorder(), HandlerOptions{}, nil)
	require.NoError(t, err)
	_, err = p.AddHandler(newRecorder(), HandlerOptions{}, nil)
	require.NoError(t, err)
	assert.Equal(t, 2, p.Len())
	a.Remove()
	assert.Equal(t, 1, p.Len())
}
