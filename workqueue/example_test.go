package workqueue_test

import (
	"errors"
	"fmt"
	"sync"

	"github.com/seed31a95821/informer/workqueue"
)

// The worker loop of every controller: take a key, do the work, and either
// forget the key's failures or hand it back for a rate-limited retry.
func Example() {
	var q workqueue.Queue[string] // the zero value is ready, with client-go's default rate limiter
	attempts := map[string]int{}
	reconcile := func(key string) error {
		attempts[key]++
		if key == "shop/web" && attempts[key] < 3 {
			return errors.New("conflict") // fails twice, then succeeds
		}
		return nil
	}

	q.Add("shop/web")
	q.Add("shop/db")
	q.Add("shop/web") // already waiting: one piece of work

	var wg sync.WaitGroup
	wg.Go(func() { // one worker, so that the attempts map needs no lock
		for {
			key, shutdown := q.Get()
			if shutdown {
				return
			}
			if err := reconcile(key); err != nil {
				q.AddRateLimited(key) // back in 5ms, then 10ms, ...
			} else {
				q.Forget(key)
				if q.Len() == 0 && q.Stats().Waiting == 0 {
					q.ShutDown() // this example's end; a controller runs until its context ends
				}
			}
			q.Done(key)
		}
	})
	wg.Wait()
	fmt.Println("shop/web attempts:", attempts["shop/web"], "shop/db attempts:", attempts["shop/db"])
	fmt.Println("retries:", q.Stats().Retries)
	// Output:
	// shop/web attempts: 3 shop/db attempts: 1
	// retries: 2
}

// Priorities put the initial list behind live events.
func ExampleQueue_AddWithPriority() {
	var q workqueue.Queue[string]
	q.AddWithPriority("shop/old-1", workqueue.PriorityLow) // from the informer's initial list
	q.AddWithPriority("shop/old-2", workqueue.PriorityLow)
	q.Add("shop/just-changed") // a live event
	for q.Len() > 0 {
		key, _ := q.Get()
		fmt.Println(key)
		q.Done(key)
	}
	// Output:
	// shop/just-changed
	// shop/old-1
	// shop/old-2
}
