package processor_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer/processor"
)

func newPod(ns, name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

// The informer's side of the conversation: register a handler, run, feed the
// initial list, mark it synced, wait for the handler to catch up.
func Example() {
	p := processor.New(processor.Options{})
	reg, err := p.AddHandler(processor.HandlerFunc(func(n processor.Notification) {
		fmt.Println(n.Type, n.Key, "initial:", n.InInitialList)
	}), processor.HandlerOptions{Name: "printer"}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}

	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		p.Run(ctx)
	}()

	for _, name := range []string{"web-1", "web-2"} {
		p.Distribute(processor.Notification{
			Type: processor.Add, Key: "shop/" + name, Object: newPod("shop", name), InInitialList: true,
		}, false)
	}
	p.MarkSynced() // the cache holds the initial list
	<-reg.Synced() // the handler has seen it
	fmt.Println("synced:", reg.HasSynced(), "delivered:", reg.Stats().Delivered)

	cancel()
	<-stopped // Run returns once every handler goroutine has exited
	// Output:
	// Add shop/web-1 initial: true
	// Add shop/web-2 initial: true
	// synced: true delivered: 2
}

// A handler added while the processor runs first receives the snapshot it is
// given, on its own goroutine, then the live stream.
func ExampleProcessor_AddHandler() {
	p := processor.New(processor.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		p.Run(ctx)
	}()
	p.MarkSynced()

	var wg sync.WaitGroup
	wg.Add(2)
	// The state the late handler starts from; an informer passes an
	// immutable snapshot of its cache (indexer.Snapshot) instead.
	web1 := newPod("shop", "web-1")
	snapshot := processor.Objects{"shop/web-1": web1}
	reg, err := p.AddHandler(processor.HandlerFunc(func(n processor.Notification) {
		defer wg.Done()
		fmt.Println(n.Type, n.Key, "initial:", n.InInitialList)
	}), processor.HandlerOptions{Name: "late"}, snapshot)
	if err != nil {
		fmt.Println(err)
		return
	}
	updated := newPod("shop", "web-1")
	updated.Labels = map[string]string{"tier": "front"}
	p.Distribute(processor.Notification{Type: processor.Update, Key: "shop/web-1", Object: updated, Old: web1}, false)

	wg.Wait()
	fmt.Println("synced:", reg.HasSynced())
	cancel()
	<-stopped
	// Output:
	// Add shop/web-1 initial: true
	// Update shop/web-1 initial: false
	// synced: true
}

// A panicking handler is reported through OnError and keeps going.
func ExampleHandlerPanicError() {
	p := processor.New(processor.Options{OnError: func(err error) {
		fmt.Println("reported:", err)
	}})
	reg, _ := p.AddHandler(processor.HandlerFunc(func(n processor.Notification) {
		if n.Key == "shop/bad" {
			panic("cannot handle this one")
		}
		fmt.Println("handled", n.Key)
	}), processor.HandlerOptions{Name: "fragile"}, nil)

	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		p.Run(ctx)
	}()
	for _, name := range []string{"bad", "good"} {
		p.Distribute(processor.Notification{Type: processor.Add, Key: "shop/" + name, Object: newPod("shop", name)}, false)
	}
	p.MarkSynced()
	<-reg.Synced()
	fmt.Println("panics:", reg.Stats().Panics)
	cancel()
	<-stopped
	// Output:
	// reported: processor: handler "fragile" panicked on Add "shop/bad": cannot handle this one
	// handled shop/good
	// panics: 1
}

// Resyncs reach only the handlers that are due, each on its own period.
// The informer asks with the current time at every tick of its resync
// timer; here the ticks are the times the handlers were added at plus 30s,
// 1m and 5m.
func ExampleProcessor_ShouldResync() {
	p := processor.New(processor.Options{})
	for _, period := range []time.Duration{time.Minute, 5 * time.Minute} {
		_, _ = p.AddHandler(processor.HandlerFunc(func(processor.Notification) {}),
			processor.HandlerOptions{Name: period.String(), ResyncPeriod: period}, nil)
	}
	// Read after AddHandler, so that no handler's schedule starts later.
	start := time.Now()
	for _, elapsed := range []time.Duration{30 * time.Second, time.Minute, 5 * time.Minute} {
		fmt.Printf("after %v: resync %v\n", elapsed, p.ShouldResync(start.Add(elapsed)))
	}
	// Output:
	// after 30s: resync false
	// after 1m0s: resync true
	// after 5m0s: resync true
}
