package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seed31a95821/informer/reconcile"
	"github.com/seed31a95821/informer/workqueue"
)

// A loop of two workers: the first try of "shop/web" fails and is retried
// after the rate limiter's backoff; Run returns once the context ends and
// the queue is drained.
func ExampleLoop() {
	q := &workqueue.Queue[string]{}
	ctx, cancel := context.WithCancel(context.Background())
	tries := 0
	loop := &reconcile.Loop{
		Queue:   q,
		Workers: 2,
		Reconcile: func(ctx context.Context, key string) (reconcile.Result, error) {
			tries++ // one key is never reconciled by two workers at once
			if tries == 1 {
				return reconcile.Result{}, errors.New("the API server is busy")
			}
			fmt.Println("reconciled", key, "on try", tries)
			cancel()
			return reconcile.Result{}, nil
		},
		OnError: func(key string, err error) { fmt.Println("retrying", key+":", err) },
	}
	q.Add("shop/web")
	done := make(chan error)
	go func() { done <- loop.Run(ctx) }()
	select {
	case err := <-done:
		fmt.Println("stopped:", err, loop.Stats())
	case <-time.After(10 * time.Second):
		fmt.Println("timed out")
	}
	// Output:
	// retrying shop/web: the API server is busy
	// reconciled shop/web on try 2
	// stopped: <nil> {1 1 0 0 0}
}
