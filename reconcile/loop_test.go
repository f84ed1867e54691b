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

// Stopping drains: a key in hand is finished before Run returns, and the
// keys still waiting are handed out too; nothing runs after Run returns.
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
		assert.Equal(t, []string{"slow", "next"}, finished)
		assert.True(t, q.ShuttingDown())
	})
}

type gate chan error

func (g gate) Wait(ctx context.Context) error {
	select {
	case err := <-g:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// No key is reconciled before the Gate opens; a Gate that fails ends Run
// with its error and no worker started.
func TestGateHoldsTheWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := &workqueue.Queue[string]{}
		c := &calls{start: time.Now()}
		g := make(gate, 1)
		l := &reconcile.Loop{Queue: q, Gate: g, Reconcile: func(_ context.Context, key string) (reconcile.Result, error) {
			c.note(key)
			return reconcile.Result{}, nil
		}}
		stop := runLoop(t, l)
		q.Add("a")
		time.Sleep(time.Hour)
		synctest.Wait()
		assert.Empty(t, c.of("a"), "reconciled before the gate opened")
		g <- nil
		synctest.Wait()
		assert.Equal(t, []time.Duration{time.Hour}, c.of("a"))
		require.NoError(t, stop())

		lost := errors.New("lost the election")
		g <- lost
		l2 := &reconcile.Loop{Queue: &workqueue.Queue[string]{}, Gate: g, Reconcile: l.Reconcile}
		assert.ErrorIs(t, l2.Run(t.Context()), lost)
	})
}

// A Loop without its parts says so instead of panicking.
func TestIncompleteLoop(t *testing.T) {
	assert.ErrorIs(t, (&reconcile.Loop{}).Run(t.Context()), reconcile.ErrIncomplete)
	assert.ErrorIs(t, (&reconcile.Loop{Queue: &workqueue.Queue[string]{}}).Run(t.Context()), reconcile.ErrIncomplete)
}
