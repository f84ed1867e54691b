//go:build unix

package bench

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The initial-list benchmark: the pipeline behind a backlog. The in-memory
// server lists listedPods pods and then sends nothing, so the whole list
// lands in the informer's queue at once and its consumer drains that
// backlog: the path where popping keys in batches (PopBatch) pays, where
// the watch benchmark's events mostly find the consumer idle. One op is
// one informer syncing the list, every handler told about every pod; the
// per-pod figures are ns/pod and cpu-ns/pod (the CPU of the timed parts;
// allocs/pod counts building and stopping the informers too).
//
//	go test -run xxx -bench PipelineInitialList -benchmem -count 6 | benchstat -col /impl -

// listedPods is the size of the list: a large namespace's worth.
const listedPods = 10_000

func BenchmarkPipelineInitialList(b *testing.B) {
	listed := make([]corev1.Pod, listedPods)
	for i := range listed {
		listed[i] = *replayPod(i, 1, "ADDED")
	}
	pool := newReplayPool()
	for _, handlers := range []int{1, 100} {
		for _, impl := range pipelineImpls {
			b.Run(fmt.Sprintf("handlers=%d/impl=%s", handlers, impl.name), func(b *testing.B) {
				benchmarkInitialList(b, impl, pool, listed, handlers)
			})
		}
	}
}

func benchmarkInitialList(b *testing.B, impl pipelineImpl, pool *replayPool, listed []corev1.Pod, handlers int) {
	b.ReportAllocs()
	var mem0, mem1 runtime.MemStats
	runtime.ReadMemStats(&mem0)
	var cpu time.Duration // of the timed parts only
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		lw := newReplayLW(pool, 0)
		lw.listed = listed
		tally := newPipelineTally(handlers, listedPods)
		run, _, err := impl.build(lw, tally)
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		b.StartTimer()
		cpu0 := processCPU()
		wg.Go(func() { run(ctx) })
		r := &pipelineRun{lw: lw, tally: tally}
		err = r.await(pipelineTimeout)
		cpu += processCPU() - cpu0
		b.StopTimer()
		cancel()
		wg.Wait()
		lw.wait()
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	runtime.ReadMemStats(&mem1)
	pods := float64(b.N) * listedPods
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/pods, "ns/pod")
	b.ReportMetric(float64(cpu.Nanoseconds())/pods, "cpu-ns/pod")
	b.ReportMetric(float64(mem1.Mallocs-mem0.Mallocs)/pods, "allocs/pod")
}
