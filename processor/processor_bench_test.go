package processor

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// BenchmarkDistribute measures the whole fan-out: one op is one notification
// distributed and then handled by every handler. Handlers only count, so the
// figure is the processor's own cost. The distributing loop runs flat out, so
// handlers fall behind and the journal grows: the bytes/op include the pages
// that growth takes.
//
// With backlog=keepall every handler reads every notification from the
// journal. With backlog=default, handlers that fall more than
// DefaultBacklogLimit behind coalesce: every notification is of the same
// key, so they are told of far fewer, and the figure is what the writer
// pays to push into their backlogs instead. Either way a handler is done
// when it has been told of the last notification, which has a key of its
// own.
//
// ns/delivery is wall time per (notification, handler) pair; cpu-ns/delivery
// is the process's CPU time per pair, the steadier figure on a busy machine.
func BenchmarkDistribute(b *testing.B) {
	for _, handlers := range []int{1, 10, 100} {
		for _, keepAll := range []bool{true, false} {
			mode := map[bool]string{true: "keepall", false: "default"}[keepAll]
			b.Run(fmt.Sprintf("handlers=%d/backlog=%s", handlers, mode), func(b *testing.B) {
				benchmarkDistribute(b, handlers, keepAll)
			})
		}
	}
}

func benchmarkDistribute(b *testing.B, handlers int, keepAll bool) {
	p := New(Options{})
	var finished sync.WaitGroup
	for range handlers {
		finished.Add(1)
		_, err := p.AddHandler(HandlerFunc(func(n Notification) {
			if n.Key == "last" {
				finished.Done()
			}
		}), HandlerOptions{KeepAllUpdates: keepAll}, nil)
		if err != nil {
			b.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		p.Run(ctx)
	}()
	n := Notification{Type: Update, Key: "ns/name", Object: pod("ns", "name"), Old: pod("ns", "name")}

	b.ReportAllocs()
	cpuBefore, cpuOK := processCPUTime()
	b.ResetTimer()
	for range b.N - 1 {
		p.Distribute(n, false)
	}
	p.Distribute(Notification{Type: Add, Key: "last", Object: pod("ns", "last")}, false)
	finished.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*handlers), "ns/delivery")
	if cpuAfter, ok := processCPUTime(); ok && cpuOK {
		// CPU rather than wall time: what the fan-out costs the machine,
		// whatever else is running on it.
		b.ReportMetric(float64((cpuAfter-cpuBefore).Nanoseconds())/float64(b.N*handlers), "cpu-ns/delivery")
	}
	cancel()
	<-stopped
}
