package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// A side is one informer, ours or client-go's, in a child process. The
// parent sends commands on the child's standard input and reads one reply
// per command on its standard output, both JSON lines.

// sideConfig is the child's command line.
type sideConfig struct {
	Side     string // "ours" or "client-go"
	URL      string
	Encoding string // "json" or "protobuf"
	Strip    bool   // StripManagedFields, or client-go's equivalent transform
	Handlers int    // handlers registered; handler 0 records
	Slow     bool   // the last handler takes slowHandler per event
	Profile  string // -profile: the directory for each step's profiles
}

// slowHandler is what the slow handler spends on each event.
const slowHandler = time.Millisecond

// command is one step the parent asks for.
type command struct {
	Op string `json:"op"` // sync, relist-arm, relist-wait, events-arm, events-wait, heap, quit
	N  int    `json:"n,omitempty"`
	// Since is when the events became available to the informer (the
	// first write of a burst, the release of a backlog), in Unix
	// nanoseconds: rates run from then to the last event handled, so that
	// a consumer that batches cannot look faster by starting late.
	Since int64 `json:"since,omitempty"`
	// Step names the step for its profiles (-profile): set on sync, on
	// the arm commands, and on heap (after a churn).
	Step string `json:"step,omitempty"`
}

// reply is a child's answer; only the fields of the step are set.
type reply struct {
	Err string `json:"err,omitempty"`

	SyncSeconds  float64 `json:"syncSeconds,omitempty"`
	PeakLive     uint64  `json:"peakLive,omitempty"`
	PeakInUse    uint64  `json:"peakInUse,omitempty"`
	Baseline     uint64  `json:"baseline,omitempty"`
	Retained     uint64  `json:"retained,omitempty"` // heap after GC, once synced
	Cached       int     `json:"cached,omitempty"`
	Steady       uint64  `json:"steady,omitempty"` // heap after GC before a relist
	Seconds      float64 `json:"seconds,omitempty"`
	Unchanged    int64   `json:"unchanged,omitempty"` // updates whose old and new resourceVersion are equal
	Events       int64   `json:"events,omitempty"`
	P50          float64 `json:"p50,omitempty"` // seconds
	P99          float64 `json:"p99,omitempty"`
	CPUSeconds   float64 `json:"cpuSeconds,omitempty"` // the child's user+system CPU over the step
	Allocs       uint64  `json:"allocs,omitempty"`     // heap objects the child allocated over the step
	HeapOverTime []heapSample
}

// informerSide is what each implementation provides.
type informerSide interface {
	// start registers the handlers and starts the informer; synced closes
	// once the cache holds the first list.
	start(ctx context.Context, rec *recorder) (synced <-chan struct{}, err error)
	// cached is the number of objects in the cache.
	cached() int
	// relistArm notes the state before a relist; relistDone reports
	// whether the relist has reached the cache and the handlers. client-go
	// tells every handler about every unchanged object (n of them); ours
	// tells only handlers whose resync is due, so it is asked its
	// reflector's and queue's statistics instead.
	relistArm()
	relistDone(rec *recorder, n int) bool
}

// recorder is handler 0: it counts what it is told and times the updates
// that carry the parent's write time.
type recorder struct {
	unchanged atomic.Int64
	events    atomic.Int64
	lat       latencies

	mu          sync.Mutex // guards first, last
	first, last time.Time
}

// writtenAt is the annotation in which the parent puts the time of a write.
const writtenAt = "bench.informer/written-at"

func (r *recorder) update(old, cur *corev1.Pod) {
	if old.ResourceVersion == cur.ResourceVersion {
		r.unchanged.Add(1)
		return
	}
	at, err := strconv.ParseInt(cur.Annotations[writtenAt], 10, 64)
	if err != nil {
		return
	}
	now := time.Now()
	r.lat.add(now.Sub(time.Unix(0, at)))
	r.mu.Lock()
	if r.first.IsZero() {
		r.first = now
	}
	r.last = now
	r.mu.Unlock()
	r.events.Add(1)
}

func (r *recorder) reset() {
	r.unchanged.Store(0)
	r.events.Store(0)
	r.lat.take()
	r.mu.Lock()
	r.first, r.last = time.Time{}, time.Time{}
	r.mu.Unlock()
}

// runSide is the child's main loop.
func runSide(ctx context.Context, cfg sideConfig, in io.Reader, out io.Writer) error {
	var impl informerSide
	switch cfg.Side {
	case "ours":
		impl = newOurs(cfg)
	case "client-go":
		impl = newClientGo(cfg)
	default:
		return fmt.Errorf("unknown side %q", cfg.Side)
	}
	s := &child{cfg: cfg, impl: impl, rec: &recorder{}}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lines := bufio.NewScanner(in)
	enc := json.NewEncoder(out)
	for lines.Scan() {
		var c command
		if err := json.Unmarshal(lines.Bytes(), &c); err != nil {
			return fmt.Errorf("command %q: %w", lines.Text(), err)
		}
		if c.Op == "quit" {
			return nil
		}
		r, err := s.do(ctx, c)
		if err != nil {
			r.Err = err.Error()
		}
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return lines.Err()
}

// child holds a side's state between commands.
type child struct {
	cfg   sideConfig
	impl  informerSide
	rec   *recorder
	heap  *sampler
	at    time.Time
	cpuAt float64      // processCPU at the arm command
	alloc uint64       // allocatedObjects at the arm command
	prof  *stepProfile // the step being profiled, if any
}

// stepTimeout bounds one step; client-go's relist of 100k JSON pods takes minutes
// on a loaded 2-core machine.
const stepTimeout = 10 * time.Minute

func (s *child) do(ctx context.Context, c command) (reply, error) {
	switch c.Op {
	case "sync":
		return s.sync(ctx, c.N, c.Step)
	case "heap":
		// What the cache holds now, garbage collected: after a churn.
		r := reply{Retained: heapAfterGC(), Cached: s.impl.cached()}
		if s.cfg.Profile != "" && c.Step != "" {
			return r, writeHeap(filepath.Join(s.cfg.Profile, fileName(c.Step)+".retained.heap"))
		}
		return r, nil
	case "relist-arm", "events-arm":
		s.rec.reset()
		r := reply{}
		var peak *peakHeap
		if c.Op == "events-arm" {
			// As the parent does before each step: the drain of a backlog
			// is short, and a collection of the informer's earlier
			// garbage would otherwise land in it or not by chance.
			runtime.GC()
		}
		if c.Op == "relist-arm" {
			s.impl.relistArm()
			r.Steady = heapAfterGC()
			if s.cfg.Profile != "" {
				peak = &peakHeap{path: filepath.Join(s.cfg.Profile, fileName(c.Step)+".peak.heap")}
			}
		}
		var err error
		if s.prof, err = startProfile(s.cfg.Profile, c.Step, ".child"); err != nil {
			return r, err
		}
		if c.Op == "relist-arm" {
			s.heap = startSampler(peak)
		}
		s.at, s.cpuAt, s.alloc = time.Now(), processCPU(), allocatedObjects()
		return r, nil
	case "relist-wait":
		if err := waitFor(ctx, func() bool { return s.impl.relistDone(s.rec, c.N) }); err != nil {
			return reply{}, fmt.Errorf("relist: %d of %d unchanged notifications: %w", s.rec.unchanged.Load(), c.N, err)
		}
		r := reply{Seconds: time.Since(s.at).Seconds(), Unchanged: s.rec.unchanged.Load()}
		r.PeakLive, r.PeakInUse, r.HeapOverTime = s.heap.stop()
		return r, s.prof.stop(".child")
	case "events-wait":
		if err := waitFor(ctx, func() bool { return s.rec.events.Load() >= int64(c.N) }); err != nil {
			return reply{}, fmt.Errorf("events: %d of %d: %w", s.rec.events.Load(), c.N, err)
		}
		if err := s.prof.stop(".child"); err != nil {
			return reply{}, err
		}
		s.rec.mu.Lock()
		from := s.rec.first
		if c.Since != 0 {
			from = time.Unix(0, c.Since)
		}
		span := s.rec.last.Sub(from)
		s.rec.mu.Unlock()
		d := s.rec.lat.take()
		return reply{Seconds: span.Seconds(), Events: s.rec.events.Load(), CPUSeconds: processCPU() - s.cpuAt,
			Allocs: allocatedObjects() - s.alloc,
			P50:    percentile(d, 50).Seconds(), P99: percentile(d, 99).Seconds()}, nil
	}
	return reply{}, fmt.Errorf("unknown command %q", c.Op)
}

func (s *child) sync(ctx context.Context, n int, step string) (reply, error) {
	baseline := heapAfterGC()
	prof, err := startProfile(s.cfg.Profile, step, ".child")
	if err != nil {
		return reply{}, err
	}
	heap := startSampler(nil)
	start := time.Now()
	synced, err := s.impl.start(ctx, s.rec)
	if err != nil {
		heap.stop()
		return reply{}, err
	}
	select {
	case <-synced:
	case <-time.After(stepTimeout):
		heap.stop()
		return reply{}, fmt.Errorf("not synced after %v", stepTimeout)
	}
	r := reply{SyncSeconds: time.Since(start).Seconds(), Baseline: baseline}
	r.PeakLive, r.PeakInUse, _ = heap.stop()
	if err := prof.stop(""); err != nil {
		return r, err
	}
	r.Retained = heapAfterGC()
	if prof != nil {
		// After the collection: what the cache holds, garbage gone.
		if err := writeHeap(prof.base + ".child.heap"); err != nil {
			return r, err
		}
	}
	// The collector measures the live heap only at the end of a cycle, so
	// the samples can miss the last stretch of a growing heap: what is
	// live once synced is part of the sync's peak.
	r.PeakLive = max(r.PeakLive, r.Retained)
	r.Cached = s.impl.cached()
	if r.Cached != n {
		return r, fmt.Errorf("synced with %d objects, want %d", r.Cached, n)
	}
	return r, nil
}

// waitFor polls cond every millisecond, up to stepTimeout.
func waitFor(ctx context.Context, cond func() bool) error {
	deadline := time.Now().Add(stepTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %v", stepTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
	return nil
}
