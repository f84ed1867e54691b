package main

import (
	"context"
	"math"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"syscall"
	"time"
)

// heapSample is one reading of the heap.
type heapSample struct {
	At    time.Duration `json:"at"`    // since the sampler started
	Live  uint64        `json:"live"`  // /gc/heap/live:bytes
	InUse uint64        `json:"inUse"` // /memory/classes/heap/objects:bytes
}

var heapMetrics = []string{"/gc/heap/live:bytes", "/memory/classes/heap/objects:bytes"}

func readHeap() (live, inUse uint64) {
	s := []metrics.Sample{{Name: heapMetrics[0]}, {Name: heapMetrics[1]}}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}

// heapAfterGC collects twice (the second finishes what the first's sweep
// left) and returns the heap that is left.
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	_, inUse := readHeap()
	return inUse
}

// allocatedObjects is the number of heap objects this process has
// allocated since it started (/gc/heap/allocs:objects): over a step, the
// informer's allocations end to end, reading and decoding included.
func allocatedObjects() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// sampler records the heap every 2 ms until stopped.
type sampler struct {
	start  time.Time
	peak   *peakHeap // told every live heap read, when profiling
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex // guards samples
	samples []heapSample
}

func startSampler(peak *peakHeap) *sampler {
	ctx, cancel := context.WithCancel(context.Background())
	s := &sampler{start: time.Now(), peak: peak, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			s.record()
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *sampler) record() {
	live, inUse := readHeap()
	s.peak.observe(live)
	s.mu.Lock()
	s.samples = append(s.samples, heapSample{At: time.Since(s.start), Live: live, InUse: inUse})
	s.mu.Unlock()
}

// stop ends sampling and returns the peaks and the samples.
func (s *sampler) stop() (peakLive, peakInUse uint64, samples []heapSample) {
	s.cancel()
	<-s.done
	s.record()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.samples {
		peakLive, peakInUse = max(peakLive, x.Live), max(peakInUse, x.InUse)
	}
	return peakLive, peakInUse, thin(s.samples, 400)
}

// thin keeps at most n samples, evenly spaced, and always the largest.
func thin(in []heapSample, n int) []heapSample {
	if len(in) <= n {
		return slices.Clone(in)
	}
	out := make([]heapSample, 0, n+1)
	step := float64(len(in)) / float64(n)
	top := 0
	for i, x := range in {
		if x.InUse > in[top].InUse {
			top = i
		}
	}
	for i := 0; i < n; i++ {
		j := int(float64(i) * step)
		if top >= j && top < int(float64(i+1)*step) {
			j = top
		}
		out = append(out, in[j])
	}
	return out
}

// processCPU is the CPU time this process has used, user and system, in
// seconds: unlike a rate, it does not depend on how much of the shared
// machine the process was given.
func processCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// latencies collects write-to-handler delays.
type latencies struct {
	mu sync.Mutex // guards d
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) { l.mu.Lock(); l.d = append(l.d, d); l.mu.Unlock() }

func (l *latencies) take() []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	d := l.d
	l.d = nil
	return d
}

// percentile returns the p-th percentile (0..100] of d by nearest rank: the
// smallest value that at least p% of d do not exceed. It sorts d.
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	i := int(math.Ceil(p/100*float64(len(d)))) - 1
	return d[max(i, 0)]
}
