package reconcile

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed31a95821/informer/workqueue"
)

// Result says what to do with a key that was reconciled without error.
type Result struct {
	// RequeueAfter, when positive, puts the key back after that long: for
	// work that depends on time, such as an expiry. Zero means done.
	RequeueAfter time.Duration
}

// Func reconciles the object named by key ("namespace/name"): it reads
// the object from a lister, makes the world match it, and says when to
// look again. ctx ends when the loop stops.
type Func func(ctx context.Context, key string) (Result, error)

// Gate admits a worker to one key: it is where leader election
// (leaderelection.Gate) and the shards of a fleet (sharding.Coordinator)
// plug in. The loop asks Admit for every key it takes from the queue, and
// Admit may block until it can answer (a standby waits for its term):
//
//   - ok: reconcile key under term, which ends when this replica's right
//     to work on key ends (the term, the shard's lease); leave must be
//     called once that work has stopped, and the gate hands the right over
//     only after every leave, so a term never ends under a running
//     reconcile on the lease holder's side.
//   - not ok: the gate has kept key (a shard held elsewhere parks it) and
//     puts it back in the queue when it may be worked on; the loop drops it.
//   - err: the gate will never admit again (ctx ended, say); the loop
//     stops, and Run returns err unless its own ctx ended.
type Gate interface {
	Admit(ctx context.Context, key string) (term context.Context, leave func(), ok bool, err error)
}

// Loop runs Workers goroutines over Queue, each calling Reconcile for one
// key at a time. Set the fields, then call Run once (a second Run finds
// the queue shut down and returns when ctx ends). The queue guarantees
// that one key is never reconciled by two workers at once.
type Loop struct {
	Queue     *workqueue.Queue[string]
	Reconcile Func
	// Workers is how many keys are reconciled at once; 0 means 1.
	Workers int
	// Gate, when set, admits each key: a key is reconciled only while the
	// gate lets it through, under a context that ends with the gate's term.
	Gate Gate
	// OnError, when set, hears each failed key: the error Reconcile
	// returned, or a *PanicError. It is called from the worker, so it must
	// not block for long.
	OnError func(key string, err error)

	reconciled, failed, panicked, requeued, cut atomic.Uint64
}

// Stats counts what the loop did with keys since it started.
type Stats struct {
	Reconciled uint64 // calls that returned without error
	Failed     uint64 // calls that returned an error or panicked
	Panicked   uint64 // calls that panicked (also counted in Failed)
	Requeued   uint64 // successes with RequeueAfter
	Cut        uint64 // errors after the term or the loop ended: put back, not failures
}

// Stats returns the loop's counts. It is safe to call at any time.
func (l *Loop) Stats() Stats {
	return Stats{Reconciled: l.reconciled.Load(), Failed: l.failed.Load(),
		Panicked: l.panicked.Load(), Requeued: l.requeued.Load(), Cut: l.cut.Load()}
}

// ErrIncomplete is Run's answer for a Loop without a Queue or a
// Reconcile: there is nothing to run.
var ErrIncomplete = errors.New("reconcile: a Loop needs a Queue and a Reconcile")

// PanicError is a panic in Reconcile, recovered by the loop.
type PanicError struct {
	Key   string
	Value any // what was passed to panic
}

// Error names the key and the panic's value.
func (e *PanicError) Error() string {
	return fmt.Sprintf("reconcile: %q panicked: %v", e.Key, e.Value)
}

// Run starts the workers and blocks until ctx ends or the Gate fails;
// then it drains the queue (the keys in hand are finished; the keys still
// waiting are dropped, never reconciled under an ended context) and returns
// once every worker has stopped. It returns the Gate's error, or nil when
// ctx ended. Run owns the queue's end: the queue is shut down when Run
// returns.
func (l *Loop) Run(ctx context.Context) error {
	if l.Queue == nil || l.Reconcile == nil {
		return ErrIncomplete
	}
	wctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var wg sync.WaitGroup
	for range max(l.Workers, 1) {
		wg.Go(func() { l.work(wctx, stop) })
	}
	<-wctx.Done()
	l.Queue.ShutDownWithDrain()
	wg.Wait()
	if ctx.Err() == nil {
		return context.Cause(wctx) // only a Gate's error ends wctx first
	}
	return nil
}

// work takes keys until the queue shuts down; a Gate's error stops the
// loop.
func (l *Loop) work(ctx context.Context, stop context.CancelCauseFunc) {
	for {
		key, shutdown := l.Queue.Get()
		if shutdown {
			return
		}
		if ctx.Err() != nil {
			// Stopping: the queue still hands out what is ready, but only
			// the keys already in hand are finished; the rest are dropped
			// with the queue, never reconciled under an ended context.
			l.Queue.Done(key)
			continue
		}
		if err := l.process(ctx, key); err != nil {
			stop(err)
		}
		l.Queue.Done(key)
	}
}

// process admits key through the Gate, reconciles it under the context
// of the loop and the term together, leaves the term, and files the
// outcome.
func (l *Loop) process(ctx context.Context, key string) error {
	work, leave := ctx, func() {}
	if l.Gate != nil {
		term, left, ok, err := l.Gate.Admit(ctx, key)
		if err != nil {
			return fmt.Errorf("reconcile: gate: %w", err)
		}
		if !ok {
			l.Queue.Forget(key) // parked by the gate, which gives it back
			return nil
		}
		var end context.CancelFunc
		work, end = within(ctx, term)
		leave = func() {
			end()
			if left != nil {
				left()
			}
		}
	}
	res, err := l.call(work, key)
	cut := work.Err() != nil
	leave()
	l.finish(key, res, err, cut)
	return nil
}

// within returns a context that ends when ctx or term does: a reconcile
// may go on only while the loop runs and the term lasts.
func within(ctx, term context.Context) (context.Context, context.CancelFunc) {
	work, cancel := context.WithCancelCause(ctx)
	if term == nil {
		return work, func() { cancel(nil) }
	}
	detach := context.AfterFunc(term, func() { cancel(context.Cause(term)) })
	return &termBound{Context: work, term: term, cancel: cancel}, func() { detach(); cancel(nil) }
}

// termBound is a reconcile's context under a term. Its Err asks the
// term's Err too, not only its Done: a leader's term reads the clock in
// Err (leaderelection), so a reconcile that checks its context right
// before a write sees a lapsed term even when the term's watchdog has
// not yet run (a process resumed after a pause). It cancels itself
// first, so that Err and Done agree.
type termBound struct {
	context.Context
	term   context.Context
	cancel context.CancelCauseFunc
}

// Err is the reconcile's error: the loop's or the term's end.
func (c *termBound) Err() error {
	if err := c.Context.Err(); err != nil {
		return err
	}
	if err := c.term.Err(); err != nil {
		c.cancel(context.Cause(c.term))
		return c.Context.Err()
	}
	return nil
}

// call runs Reconcile, turning a panic into a *PanicError.
func (l *Loop) call(ctx context.Context, key string) (res Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			l.panicked.Add(1)
			res, err = Result{}, &PanicError{Key: key, Value: v}
		}
	}()
	return l.Reconcile(ctx, key)
}

// finish is the one place that decides what becomes of a key (the table
// in the package doc). cut says that the reconcile's context ended while
// it ran: the loop is stopping or the term is over.
func (l *Loop) finish(key string, res Result, err error, cut bool) {
	var pe *PanicError
	if err != nil && cut && !errors.As(err, &pe) {
		// Cut short, not failed: no backoff, no report. The key goes back;
		// the Gate holds it until this replica may work on it again, and
		// a stopping queue drops it.
		l.cut.Add(1)
		l.Queue.Add(key)
		return
	}
	if err != nil {
		l.failed.Add(1)
		l.Queue.AddRateLimited(key)
		if l.OnError != nil {
			l.OnError(key, err)
		}
		return
	}
	l.reconciled.Add(1)
	l.Queue.Forget(key)
	if res.RequeueAfter > 0 {
		l.requeued.Add(1)
		l.Queue.AddAfter(key, res.RequeueAfter)
	}
}
