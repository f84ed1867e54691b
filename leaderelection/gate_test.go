package leaderelection

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed31a95821/informer/reconcile"
	"github.com/seed31a95821/informer/workqueue"
)

// Workers wait at a closed gate, enter when a term opens, and the term's
// Lead returns only after the last worker in it has left.
func TestGateHoldsTermUntilWorkersLeave(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g Gate
		require.False(t, g.Leading())
		var entered atomic.Int32
		release := make(chan struct{})
		workerDone := make(chan struct{})
		go func() {
			defer close(workerDone)
			term, leave, err := g.Enter(t.Context())
			if err != nil {
				return
			}
			entered.Add(1)
			<-term.Done()
			<-release // an in-flight reconcile that finishes after the term ended
			leave()
		}()
		synctest.Wait()
		require.Zero(t, entered.Load(), "the gate is closed before a term")

		termCtx, endTerm := context.WithCancel(t.Context())
		leadDone := make(chan struct{})
		go func() { defer close(leadDone); g.Lead(termCtx) }()
		synctest.Wait()
		require.Equal(t, int32(1), entered.Load())
		require.True(t, g.Leading())

		endTerm()
		synctest.Wait()
		require.False(t, g.Leading())
		select {
		case <-leadDone:
			t.Fatal("Lead returned while a worker was still inside the term")
		default:
		}
		close(release)
		<-leadDone
		<-workerDone
	})
}

func TestGateEnterCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g Gate
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		_, _, err := g.Enter(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})
}

// endingTerm is a term whose Err already reports its end while its Done
// channel is still open: the moment between a lease's loss and Lead's
// waking up to close the gate, held open for as long as the test likes.
// A worker that looked at Err again and again in that moment (a spin)
// is parked after spinLimit looks, so that the bubble can settle and
// the test can count them.
type endingTerm struct {
	context.Context
	done  chan struct{}
	ended atomic.Bool
	looks atomic.Int32
	stuck chan struct{} // where a spinning worker is parked
}

const spinLimit = 100

func (c *endingTerm) Done() <-chan struct{} { return c.done }

func (c *endingTerm) Err() error {
	if !c.ended.Load() {
		return nil
	}
	if c.looks.Add(1) > spinLimit {
		<-c.stuck
	}
	return context.Canceled
}

// A worker that comes to the gate after its term ended, but before Lead
// has closed it, waits for the next term: it does not spin on the ended
// term until Lead gets round to closing the gate. (It did: the channel it
// waited on was the one the ended term had opened, closed already.)
func TestGateEnterAtTermEndWaitsWithoutSpinning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g Gate
		term := &endingTerm{Context: t.Context(), done: make(chan struct{}), stuck: make(chan struct{})}
		led := make(chan struct{})
		go func() { defer close(led); g.Lead(term) }()
		synctest.Wait()

		term.ended.Store(true)
		ctx, cancel := context.WithCancel(t.Context())
		entered := make(chan error, 1)
		go func() {
			_, _, err := g.Enter(ctx)
			entered <- err
		}()
		synctest.Wait()
		looks := term.looks.Load()
		close(term.stuck)
		close(term.done)
		<-led
		cancel()
		require.ErrorIs(t, <-entered, context.Canceled, "no term opened after the ended one")
		require.LessOrEqual(t, looks, int32(2), "Enter looked at the ended term %d times", looks)
	})
}

// A gate is a reconcile.Gate: a Loop plugs in with Gate: &gate.
var _ reconcile.Gate = (*Gate)(nil)

// termLoop is a reconcile.Loop behind a Gate, whose Reconcile notes each
// call and, for "slow", blocks on its first call until its context ends
// and then until release is closed.
type termLoop struct {
	mu      sync.Mutex // guards calls and cut
	calls   map[string]int
	cut     bool // slow's context ended while it ran
	release chan struct{}
}

func (tl *termLoop) reconcile(ctx context.Context, key string) (reconcile.Result, error) {
	tl.mu.Lock()
	tl.calls[key]++
	n := tl.calls[key]
	tl.mu.Unlock()
	if key == "slow" && n == 1 {
		<-ctx.Done()
		tl.mu.Lock()
		tl.cut = true
		tl.mu.Unlock()
		<-tl.release
		return reconcile.Result{}, ctx.Err()
	}
	return reconcile.Result{}, nil
}

func (tl *termLoop) count(key string) int {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return tl.calls[key]
}

// A Loop behind a Gate reconciles only during a term; the term's end
// cancels the reconcile in flight, and Lead (which holds the lease) does
// not return until that reconcile has returned; no reconcile starts after
// the term ended, and the cut key is reconciled in the next term. With
// the old once-only gate (wait for one term, then work forever) the key
// added after the term is reconciled at once and the cancellation never
// reaches the reconcile.
func TestLoopBehindGateWorksOnlyDuringATerm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g Gate
		q := &workqueue.Queue[string]{}
		tl := &termLoop{calls: map[string]int{}, release: make(chan struct{})}
		loop := &reconcile.Loop{Queue: q, Gate: &g, Workers: 2, Reconcile: tl.reconcile}
		ctx, stop := context.WithCancel(t.Context())
		ran := make(chan error, 1)
		go func() { ran <- loop.Run(ctx) }()
		var once sync.Once
		release := func() { once.Do(func() { close(tl.release) }) }
		defer release() // on a failure, too: every goroutine of the bubble ends
		defer stop()

		q.Add("a")
		time.Sleep(time.Minute)
		synctest.Wait()
		require.Zero(t, tl.count("a"), "reconciled before any term")

		term, endTerm := context.WithCancel(t.Context())
		defer endTerm()
		led := make(chan struct{})
		go func() { defer close(led); g.Lead(term) }()
		synctest.Wait()
		require.Equal(t, 1, tl.count("a"))
		q.Add("slow")
		synctest.Wait()
		require.Equal(t, 1, tl.count("slow"))

		endTerm()
		synctest.Wait()
		tl.mu.Lock()
		cut := tl.cut
		tl.mu.Unlock()
		require.True(t, cut, "the term's end did not reach the reconcile")
		select {
		case <-led:
			t.Fatal("Lead returned while a reconcile of its term was running")
		default:
		}
		release()
		synctest.Wait()
		<-led

		q.Add("b")
		time.Sleep(time.Hour)
		synctest.Wait()
		require.Zero(t, tl.count("b"), "reconciled after the term ended")
		require.Equal(t, 1, tl.count("slow"))

		term2, endTerm2 := context.WithCancel(t.Context())
		defer endTerm2()
		led2 := make(chan struct{})
		go func() { defer close(led2); g.Lead(term2) }()
		synctest.Wait()
		require.Equal(t, 1, tl.count("b"))
		require.Equal(t, 2, tl.count("slow"), "the cut key waits for the next term")
		require.Equal(t, reconcile.Stats{Reconciled: 3, Cut: 1}, loop.Stats())

		stop()
		require.NoError(t, <-ran)
		endTerm2()
		<-led2
	})
}
