package leaderelection_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/seed31a95821/informer/leaderelection"
)

// Two replicas on one lease: the first to write it leads; its workers pass
// the Gate. When it stops (ReleaseOnCancel), it hands the lease back and
// the other takes it at its next retry. On a cluster, Lock is a
// *LeaseLock (NewLeaseLock) instead of a MemoryStore.
func Example() {
	lease := &leaderelection.MemoryStore{Name: "default/my-controller"}
	led := make(chan string, 2)
	run := func(ctx context.Context, id string) {
		var gate leaderelection.Gate
		e, err := leaderelection.New(leaderelection.Options{
			Config: leaderelection.Config{Identity: id}, Lock: lease, ReleaseOnCancel: true,
			Callbacks: leaderelection.Callbacks{OnStartedLeading: gate.Lead},
		})
		if err != nil {
			panic(err)
		}
		var wg sync.WaitGroup
		wg.Go(func() { e.Run(ctx) })
		wg.Go(func() { // one worker
			term, leave, err := gate.Enter(ctx)
			if err != nil {
				return
			}
			led <- id // reconcile here, under term
			<-term.Done()
			leave()
		})
		wg.Wait()
	}
	ctxA, stopA := context.WithCancel(context.Background())
	ctxB, stopB := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { run(ctxA, "replica-a") })
	fmt.Println(<-led, "leads")
	wg.Go(func() { run(ctxB, "replica-b") })
	stopA()
	fmt.Println(<-led, "leads")
	stopB()
	wg.Wait()
	// Output:
	// replica-a leads
	// replica-b leads
}
