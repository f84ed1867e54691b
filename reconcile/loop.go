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

// Gate holds the workers back until they may work. Wait returns nil when
// they may, or an error (ctx's, say) when they never will: then Run
// returns it without starting them. A leader election waits to lead.
type Gate interface {
	Wait(ctx context.Context) error
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
	// Gate, when set, is waited on before any worker starts.
	Gate Gate
	// OnError, when set, hears each failed key: the error Reconcile
	// returned, or a *PanicError. It is called from the worker, so it must
	// not block for long.
	OnError func(key string, err error)

	reconciled, failed, panicked, requeued atomic.Uint64
}

// Stats counts what the loop did with keys since it started.
type Stats struct {
	Reconciled uint64 // calls that returned without error
	Failed     uint64 // calls that returned an error or panicked
	Panicked   uint64 // calls that panicked (also counted in Failed)
	Requeued   uint64 // successes with RequeueAfter
}

// Stats returns the loop's counts. It is safe to call at any time.
func (l *Loop) Stats() Stats {
	return Stats{Reconciled: l.reconciled.Load(), Failed: l.failed.Load(),
		Panicked: l.panicked.Load(), Requeued: l.requeued.Load()}
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

// Run waits on the Gate, starts the workers, and blocks until ctx ends;
// then it drains the queue (the keys in hand are finished) and returns
// once every worker has stopped. It returns the Gate's error, or nil.
// Run owns the queue's end: the queue is shut down when Run returns.
func (l *Loop) Run(ctx context.Context) error {
	if l.Queue == nil || l.Reconcile == nil {
		return ErrIncomplete
	}
	if l.Gate != nil {
		if err := l.Gate.Wait(ctx); err != nil {
			l.Queue.ShutDown()
			return err
		}
	}
	var wg sync.WaitGroup
	for range max(l.Workers, 1) {
		wg.Go(func() { l.work(ctx) })
	}
	<-ctx.Done()
	l.Queue.ShutDownWithDrain()
	wg.Wait()
	return nil
}

// work takes keys until the queue shuts down.
func (l *Loop) work(ctx context.Context) {
	for {
		key, shutdown := l.Queue.Get()
		if shutdown {
			return
		}
		res, err := l.call(ctx, key)
		l.finish(key, res, err)
		l.Queue.Done(key)
	}
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
// in the package doc).
func (l *Loop) finish(key string, res Result, err error) {
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
