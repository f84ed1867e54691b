package reconcile_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed31a95821/informer/reconcile"
	"github.com/seed31a95821/informer/workqueue"
)

// calls records the keys reconciled, with the fake time of each call.
type calls struct {
	mu    sync.Mutex // guards at
	at    map[string][]time.Duration
	start time.Time
}

func (c *calls) note(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at == nil {
		c.at = map[string][]time.Duration{}
	}
	c.at[key] = append(c.at[key], time.Since(c.start))
	return len(c.at[key])
}

func (c *calls) of(key string) []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.at[key]...)
}

// runLoop starts l in the bubble and returns the function that stops it
// and waits for Run.
func runLoop(t *testing.T, l *reconcile.Loop) (stop func() error) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	return func() error { cancel(); return <-done }
}

// The table of the package doc: an error retries with the rate limiter's
// backoff (5 ms, then 10 ms), a success forgets the key's failures, and
// RequeueAfter brings it back after that long.
func TestErrorRetriesSuccessForgetsRequeueAfterRequeues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &calls{start: time.Now()}
		q := &workqueue.Queue[string]{}
		var errs []error
		l := &reconcile.Loop{Queue: q, Workers: 2, OnError: func(_ string, err error) { errs = append(errs, err) },
			Reconcile: func(_ context.Context, key string) (reconcile.Result, error) {
				switch n := c.note(key); {
				case n <= 2:
					return reconcile.Result{}, errors.New("not yet")
				case n == 3:
					return reconcile.Result{RequeueAfter: time.Minute}, nil
				default:
					return reconcile.Result{}, nil
				}
			}}
		stop := runLoop(t, l)
		q.Add("shop/web")
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		assert.Equal(t, []time.Duration{0, 5 * time.Millisecond, 15 * time.Millisecond, 15*time.Millisecond + time.Minute},
			c.of("shop/web"))
		assert.Equal(t, 0, q.NumRequeues("shop/web"), "success forgets the failures")
		assert.Len(t, errs, 2)
		assert.Equal(t, reconcile.Stats{Reconciled: 2, Failed: 2, Requeued: 1}, l.Stats())
		require.NoError(t, stop())
	})
}

// A panic is recovered, counted, reported as a *PanicError and retried;
// the worker lives on.
func TestPanicIsRecoveredCountedReportedAndRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &calls{start: time.Now()}
		q := &workqueue.Queue[string]{}
		var reported error
		l := &reconcile.Loop{Queue: q, OnError: func(_ string, err error) { reported = err },
			Reconcile: func(_ context.Context, key string) (reconcile.Result, error) {
				if c.note(key) == 1 {
					panic("nil map")
				}
				return reconcile.Result{}, nil
			}}
		stop := runLoop(t, l)
		q.Add("a")
		time.Sleep(time.Second)
		synctest.Wait()
		var pe *reconcile.PanicError
		require.ErrorAs(t, reported, &pe)
		assert.Equal(t, "a", pe.Key)
		assert.Equal(t, "nil map", pe.Value)
		assert.Len(t, c.of("a"), 2, "retried after the panic")
		assert.Equal(t, reconcile.Stats{Reconciled: 1, Failed: 1, Panicked: 1}, l.Stats())
		require.NoError(t, stop())
	})
}

// Stopping drains: a key in hand is finished before Run returns; the keys
// still waiting are dropped with the queue (their context has ended, so a
// reconcile could only fail); nothing runs after Run returns.
func TestShutdownDrains(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := &workqueue.Queue[string]{}
		release := make(chan struct{})
		var mu sync.Mutex
		var finished []string
		l := &reconcile.Loop{Queue: q, Reconcile: func(_ context.Context, key string) (reconcile.Result, error) {
			if key == "slow" {
				<-release
			}
			mu.Lock()
			finished = append(finished, key)
			mu.Unlock()
			return reconcile.Result{}, nil
		}}
		stop := runLoop(t, l)
		q.Add("slow")
		q.Add("next")
		synctest.Wait() // the one worker holds "slow"
		returned := make(chan error, 1)
		go func() { returned <- stop() }()
		synctest.Wait()
		select {
		case <-returned:
			t.Fatal("Run returned with a key in hand")
		default:
		}
		close(release)
		require.NoError(t, <-returned)
		assert.Equal(t, []string{"slow"}, finished)
		assert.True(t, q.ShuttingDown())
	})
}

// gate admits the keys in open under term, parks the others (noting
// them), and fails with err once set.
type gate struct {
	mu     sync.Mutex // guards all
	open   map[string]bool
	term   context.Context
	parked []string
	left   int
	err    error
}

func (g *gate) Admit(_ context.Context, key string) (context.Context, func(), bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err != nil {
		return nil, nil, false, g.err
	}
	if !g.open[key] {
		g.parked = append(g.parked, key)
		return nil, nil, false, nil
	}
	return g.term, func() { g.mu.Lock(); g.left++; g.mu.Unlock() }, true, nil
}

// The per-key Gate: a key not admitted is dropped (the gate keeps it); an
// admitted one runs under the term and leaves it after Reconcile
// returns; the term's end cancels a running reconcile, whose error puts
// the key back without backoff or report; a failing Gate ends Run with
// its error.
func TestGateAdmitsPerKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := &workqueue.Queue[string]{}
		c := &calls{start: time.Now()}
		term, endTerm := context.WithCancel(t.Context())
		g := &gate{open: map[string]bool{"mine": true}, term: term}
		var reported []error
		l := &reconcile.Loop{Queue: q, Gate: g, OnError: func(_ string, err error) { reported = append(reported, err) },
			Reconcile: func(ctx context.Context, key string) (reconcile.Result, error) {
				if c.note(key) == 1 {
					<-ctx.Done() // the term ends under it
					return reconcile.Result{}, ctx.Err()
				}
				return reconcile.Result{}, nil
			}}
		stop := runLoop(t, l)
		q.Add("theirs")
		q.Add("mine")
		synctest.Wait()
		assert.Empty(t, c.of("theirs"), "reconciled a key the gate did not admit")
		assert.Equal(t, []string{"theirs"}, g.parked)
		assert.Len(t, c.of("mine"), 1)
		endTerm()
		synctest.Wait()
		assert.Len(t, c.of("mine"), 2, "put back at once, no backoff")
		assert.Empty(t, reported, "a cut reconcile is not a failure")
		assert.Equal(t, reconcile.Stats{Reconciled: 1, Cut: 1}, l.Stats())
		assert.Equal(t, 2, g.left, "left after each reconcile")
		assert.Zero(t, q.NumRequeues("mine"))
		require.NoError(t, stop())

		lost := errors.New("lost the election")
		q2 := &workqueue.Queue[string]{}
		q2.Add("mine")
		l2 := &reconcile.Loop{Queue: q2, Gate: &gate{err: lost}, Reconcile: l.Reconcile}
		assert.ErrorIs(t, l2.Run(t.Context()), lost)
		assert.True(t, q2.ShuttingDown())
	})
}

// A Loop without its parts says so instead of panicking.
func TestIncompleteLoop(t *testing.T) {
	assert.ErrorIs(t, (&reconcile.Loop{}).Run(t.Context()), reconcile.ErrIncomplete)
	assert.ErrorIs(t, (&reconcile.Loop{Queue: &workqueue.Queue[string]{}}).Run(t.Context()), reconcile.ErrIncomplete)
}

// TestStopFinishesOnlyTheKeysInHand: when Run's context ends, the key a
// worker holds is finished, and the keys still queued are dropped, not
// handed to Reconcile with an ended context.
func TestStopFinishesOnlyTheKeysInHand(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := workqueue.New(workqueue.Options[string]{})
		var reconciled []string
		inHand, release := make(chan struct{}), make(chan struct{})
		loop := &reconcile.Loop{Queue: q, Workers: 1, Reconcile: func(ctx context.Context, key string) (reconcile.Result, error) {
			reconciled = append(reconciled, key)
			if key == "first" {
				close(inHand)
				<-release
			}
			return reconcile.Result{}, nil
		}}
		q.Add("first")
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- loop.Run(ctx) }()
		<-inHand
		for i := range 100 {
			q.Add(string(rune('a'+i%26)) + string(rune('a'+i/26)))
		}
		cancel()
		synctest.Wait()
		close(release)
		require.NoError(t, <-done)
		require.Equal(t, []string{"first"}, reconciled)
	})
}

// clockTerm is a term whose end is known to its Err before any timer has
// cancelled it, as a leader's term after a pause (leaderelection).
type clockTerm struct {
	context.Context
	cancel context.CancelFunc
	lapsed chan struct{} // closed when the authority has lapsed
}

func (c *clockTerm) Err() error {
	select {
	case <-c.lapsed:
		c.cancel()
	default:
	}
	return c.Context.Err()
}

// A reconcile that checks its context before a write sees the term's end
// as the term's own Err reports it, not only once a timer has cancelled it.
func TestReconcileSeesATermThatLapsedBeforeItsTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		term := &clockTerm{Context: ctx, cancel: cancel, lapsed: make(chan struct{})}
		seen := make(chan error, 1)
		q := &workqueue.Queue[string]{}
		l := &reconcile.Loop{Queue: q, Gate: &gate{open: map[string]bool{"mine": true}, term: term},
			Reconcile: func(ctx context.Context, key string) (reconcile.Result, error) {
				close(term.lapsed) // the pause: the term's end passed, nothing has cancelled it
				seen <- ctx.Err()
				return reconcile.Result{}, ctx.Err()
			}}
		stop := runLoop(t, l)
		q.Add("mine")
		require.ErrorIs(t, <-seen, context.Canceled)
		require.NoError(t, stop())
	})
}
