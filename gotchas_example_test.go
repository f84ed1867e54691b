package informer_test

// The runnable half of docs/gotchas.md: each example shows one trap and the
// way out of it, and `go test` checks that what it prints stays true.

import (
	"context"
	"fmt"
	"log"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/rest"
)

// Gotcha: an unsynced cache looks exactly like an empty cluster. The lister
// answers NotFound, not "I don't know yet".
func Example_readBeforeSync() {
	srv := mustServe(pod("shop", "web-1", nil))
	defer srv.Close()
	factory := informer.NewFactory(rest.Config{Host: srv.URL()}, informer.FactoryOptions{})
	pods, err := informer.For[*corev1.Pod](factory)
	if err != nil {
		log.Fatal(err)
	}
	// Not started, so certainly not synced: the pod exists, the cache says no.
	_, err = pods.Lister().Namespace("shop").Get("web-1")
	fmt.Println("synced:", pods.HasSynced(), "not found:", apierrors.IsNotFound(err))

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	factory.Start(ctx)
	defer factory.Shutdown()
	factory.WaitForCacheSync(ctx) // the fix: wait first
	_, err = pods.Lister().Namespace("shop").Get("web-1")
	fmt.Println("synced:", pods.HasSynced(), "found:", err == nil)
	// Output:
	// synced: false not found: true
	// synced: true found: true
}

// Gotcha: the lister returns the cache's own object, the same pointer every
// reader gets. Writing to it changes what every other part of the program
// sees, and the next watch event silently overwrites it. CopyOnRead trades
// speed for safety.
func Example_sharedObjects() {
	srv := mustServe(pod("shop", "web-1", nil))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	for _, copyOnRead := range []bool{false, true} {
		opts := informer.FactoryOptions{}
		opts.Informer.CopyOnRead = copyOnRead
		factory := informer.NewFactory(rest.Config{Host: srv.URL()}, opts)
		pods, err := informer.For[*corev1.Pod](factory)
		if err != nil {
			log.Fatal(err)
		}
		factory.Start(ctx)
		factory.WaitForCacheSync(ctx)
		a, _ := pods.Lister().Namespace("shop").Get("web-1")
		b, _ := pods.Lister().Namespace("shop").Get("web-1")
		fmt.Printf("CopyOnRead=%v: two reads share one object: %v\n", copyOnRead, a == b)
		factory.Shutdown()
	}
	// Output:
	// CopyOnRead=false: two reads share one object: true
	// CopyOnRead=true: two reads share one object: false
}

// Gotcha: a resync is not a relist. It re-delivers the cached object to the
// handler as an update whose old and new are the same object; the server is
// not asked again.
func Example_resyncIsNotARelist() {
	srv := mustServe(pod("shop", "web-1", nil))
	defer srv.Close()
	factory := informer.NewFactory(rest.Config{Host: srv.URL()}, informer.FactoryOptions{})
	pods, err := informer.For[*corev1.Pod](factory)
	if err != nil {
		log.Fatal(err)
	}
	resynced := make(chan bool, 1)
	_, err = pods.AddEventHandler(informer.Handler[*corev1.Pod]{
		OnUpdate: func(old, cur *corev1.Pod) {
			select {
			case resynced <- old == cur:
			default:
			}
		},
	}, informer.HandlerOptions{ResyncPeriod: time.Second})
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	factory.Start(ctx)
	defer factory.Shutdown()
	factory.WaitForCacheSync(ctx)

	fmt.Println("old and new are the same object:", <-resynced)
	fmt.Println("snapshots taken from the server:", pods.Stats().Lists+pods.Stats().WatchListSyncs)
	// Output:
	// old and new are the same object: true
	// snapshots taken from the server: 1
}

// Gotcha, client-go edition: its factory starts only the informers requested
// before Start, so a late request waits forever. Here a late request starts
// at once.
func Example_requestAfterStart() {
	srv := mustServe(pod("shop", "web-1", nil))
	defer srv.Close()
	factory := informer.NewFactory(rest.Config{Host: srv.URL()}, informer.FactoryOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	factory.Start(ctx) // nothing requested yet
	defer factory.Shutdown()

	pods, err := informer.For[*corev1.Pod](factory)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("synced:", informer.WaitForCacheSync(ctx, pods))
	// Output: synced: true
}

// Gotcha: a deletion can be missed (the watch was down and the server's
// history moved on). The informer learns of it from the next relist, and the
// handler is told that the final state is unknown. In client-go the object
// then arrives wrapped in a DeletedFinalStateUnknown, and a DeleteFunc that
// type-asserts *Pod panics; here it is always a *Pod, with a flag.
func Example_missedDelete() {
	srv := mustServe(pod("shop", "web-1", nil))
	defer srv.Close()
	factory := informer.NewFactory(rest.Config{Host: srv.URL()}, informer.FactoryOptions{})
	pods, err := informer.For[*corev1.Pod](factory)
	if err != nil {
		log.Fatal(err)
	}
	deleted := make(chan string, 1)
	_, err = pods.AddEventHandler(informer.Handler[*corev1.Pod]{
		OnDelete: func(p *corev1.Pod, finalStateUnknown bool) {
			deleted <- fmt.Sprintf("%s/%s finalStateUnknown=%v", p.Namespace, p.Name, finalStateUnknown)
		},
	}, informer.HandlerOptions{})
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	factory.Start(ctx)
	defer factory.Shutdown()
	factory.WaitForCacheSync(ctx)

	// The watch goes down; meanwhile the pod is deleted and the history that
	// recorded it is compacted away. Then the server lets the watch back.
	srv.Faults().FailNext(fakeapi.Failure{Verb: "watch", Resource: "pods", Count: 1 << 20, Code: 503})
	srv.DropWatches()
	if err := srv.Delete(pod("shop", "web-1", nil)); err != nil {
		log.Fatal(err)
	}
	srv.Compact()
	srv.Faults().Reset()

	fmt.Println(<-deleted)
	// Output: shop/web-1 finalStateUnknown=true
}
