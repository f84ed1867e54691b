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
// ns/delivery is wall time per (notification, handler) pair; cpu-ns/delivery
// is the process's CPU time per pair, the steadier figure on a busy machine.
func BenchmarkDistribute(b *testing.B) {
	for _, handlers := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("handlers=%d", handlers), func(b *testing.B) {
			benchmarkDistribute(b, handlers)
		})
	}
}

func benchmarkDistribute(b *testing.B, handlers int) {
	p := New(Options{})
	var finished sync.WaitGroup
	for range handlers {
		finished.Add(1)
		count := 0
		_, err := p.AddHandler(HandlerFunc(func(Notification) {
			count++ // only this handler's goroutine touches count
			if count == b.N {
				finished.Done()
			}
		}), HandlerOptions{}, nil)
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
	for range b.N {
		p.Distribute(n, false)
	}
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
