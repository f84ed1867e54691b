package main

import (
	"context"
	"fmt"
	"log"
	"runtime"
	"slices"
	"time"

	"github.com/seed31a95821/informer/internal/realpod"
)

// plan is what one run measures.
type plan struct {
	sizes      []int // cold sync, relist, burst and backlog at each
	chartSizes []int // extra sync-only sizes, JSON, for the charts
	encodings  []string
	rounds     int // at each size below 100k
	bigRounds  int // at 100k and above: one such round takes minutes
	// Both are at least two: a side's order (sides) changes each round,
	// and one round would always measure ours first.
	events   func(n int) int // updates in a burst and in a backlog
	handlers int             // the many-handlers scenario: this many, one slow
	// heapOnly (-heap): each size is synced once per side, encoding and
	// round for its heap per cached pod, then churned; no relist, burst,
	// backlog, stripped sync, chart size or many handlers. The churn then
	// meets the pods as seeded, not as the bursts left them.
	heapOnly bool
}

func quickPlan() plan {
	return plan{sizes: []int{10_000}, encodings: []string{"json", "protobuf"}, rounds: 2, bigRounds: 2,
		events: func(int) int { return 5000 }, handlers: 100}
}

func fullPlan() plan {
	return plan{sizes: []int{10_000, 100_000}, chartSizes: []int{1_000, 30_000}, encodings: []string{"json", "protobuf"},
		rounds: 3, bigRounds: 2, events: func(n int) int { return min(n/2, 10_000) }, handlers: 100}
}

// window is how many writes the servers' histories keep: the most that
// one step writes while an informer watches (a churn writes a pod for
// every pod; a burst or backlog events(n)), so that no informer falls
// out of the history and relists in the middle of a step. Older writes
// are compacted as they are on a real server; a watch from before them
// gets 410 Gone.
func (p plan) window() int {
	w := 0
	for _, n := range append(slices.Clone(p.sizes), p.chartSizes...) {
		w = max(w, n+p.events(n))
	}
	return w
}

func (p plan) roundsAt(n int) int {
	if n >= 100_000 {
		return p.bigRounds
	}
	return p.rounds
}

// runner runs a plan against one cluster.
type runner struct {
	ctx        context.Context
	c          *cluster
	r          *results
	profileDir string // -profile
	window     int    // plan.window, for the clusters it starts
	steps      int    // steps profiled so far, to number their files
}

// step begins a step: it collects the parent's garbage first, so that
// the server's collection of what earlier steps wrote (gigabytes at 100k
// pods) does not fall into this step's window and count against whichever
// side happens to come next; then it names the step for its profiles and
// starts the parent's (the server's and the writer's) CPU profile of it;
// end stops it. Without -profile the name is empty and end does nothing.
func (x *runner) step(side, what, tag string) (name string, end func() error, err error) {
	runtime.GC()
	if x.profileDir == "" {
		return "", func() error { return nil }, nil
	}
	x.steps++
	name = fmt.Sprintf("%02d-%s-%s-%s", x.steps, side, what, tag)
	p, err := startProfile(x.profileDir, name, ".server")
	if err != nil {
		return "", nil, err
	}
	return name, func() error { return p.stop("") }, nil
}

// sides returns both sides, client-go first in odd rounds.
func sides(round int) []string {
	if round%2 == 1 {
		return []string{"client-go", "ours"}
	}
	return []string{"ours", "client-go"}
}

func (x *runner) run(p plan) error {
	all := slices.Sorted(slices.Values(append(slices.Clone(p.sizes), p.chartSizes...)))
	for _, n := range slices.Compact(all) {
		if err := x.c.grow(n); err != nil {
			return err
		}
		if !slices.Contains(p.sizes, n) {
			if p.heapOnly {
				continue
			}
			// One round (these sizes only draw the charts), in the order
			// that the size's place in the run gives it.
			for _, side := range sides(n / 1000) {
				if err := x.syncOnly(side, "json", n, false); err != nil {
					return err
				}
			}
			continue
		}
		for round := range p.roundsAt(n) {
			for _, enc := range p.encodings {
				for _, side := range sides(round) {
					if p.heapOnly {
						if err := x.syncOnly(side, enc, n, false); err != nil {
							return err
						}
						continue
					}
					if err := x.full(side, enc, n, p.events(n), round); err != nil {
						return err
					}
					if err := x.syncOnly(side, enc, n, true); err != nil {
						return err
					}
				}
			}
		}
		// Heap per cached pod and CPU per update once every pod has been
		// updated, in random order: after the other scenarios, which it
		// changes the pods of. The heap row is JSON's (the targets'); the
		// CPU row is both encodings'.
		for _, enc := range p.encodings {
			for round := range p.roundsAt(n) {
				for _, side := range sides(round) {
					if err := x.churnHeap(x.c, " after random-order churn", side, enc, n, round); err != nil {
						return err
					}
				}
			}
		}
		if n != p.sizes[0] {
			continue
		}
		if err := x.mixedHeap(n, p.rounds); err != nil {
			return err
		}
		if p.heapOnly {
			continue
		}
		// The many-handlers scenario, at the smallest size.
		for round := range p.rounds {
			for _, side := range sides(round) {
				if err := x.manyHandlers(side, "json", n, p.events(n), p.handlers, round); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (x *runner) spawn(side, enc string, strip bool, handlers int, slow bool) (*childProc, error) {
	log.Printf("%s %s strip=%v handlers=%d, %d pods", side, enc, strip, handlers, x.c.pods)
	return x.c.spawn(x.ctx, sideConfig{Side: side, Encoding: enc, Strip: strip, Handlers: handlers, Slow: slow,
		Profile: x.profileDir})
}

// full runs cold sync, relist, burst and backlog in one process.
func (x *runner) full(side, enc string, n, m, round int) error {
	ch, err := x.spawn(side, enc, false, 1, false)
	if err != nil {
		return err
	}
	defer ch.close()
	tag := fmt.Sprintf("%s %s", sizeName(n), enc)
	if err := x.sync(ch, side, enc, n, tag); err != nil {
		return err
	}
	if err := x.relist(ch, side, enc, n, tag); err != nil {
		return err
	}
	burst := func() (time.Time, error) { return x.c.writeUpdates(m, round) }
	if err := x.burst(ch, side, m, tag, "burst", burst); err != nil {
		return err
	}
	// The backlog is built before the step begins, so that its profiles
	// and its rate are of the drain alone.
	if err := x.c.buildBacklog(x.ctx, m, round+1000); err != nil {
		return err
	}
	return x.burst(ch, side, m, tag, "backlog drain", x.c.releaseBacklog)
}

func (x *runner) syncOnly(side, enc string, n int, strip bool) error {
	ch, err := x.spawn(side, enc, strip, 1, false)
	if err != nil {
		return err
	}
	defer ch.close()
	tag := fmt.Sprintf("%s %s", sizeName(n), enc)
	if strip {
		tag += " strip"
	}
	return x.sync(ch, side, enc, n, tag)
}

func (x *runner) sync(ch *childProc, side, enc string, n int, tag string) error {
	name, end, err := x.step(side, "sync", tag)
	if err != nil {
		return err
	}
	rep, err := ch.call(command{Op: "sync", N: n, Step: name})
	if err != nil {
		return err
	}
	if err := end(); err != nil {
		return err
	}
	x.r.add("sync "+tag, "s", "lower", side, rep.SyncSeconds)
	x.r.add("peak heap sync "+tag+" (live)", "MB", "lower", side, mb(rep.PeakLive))
	x.r.add("peak heap sync "+tag+" (in use)", "MB", "lower", side, mb(rep.PeakInUse))
	x.r.add("heap per cached pod "+tag, "KB", "lower", side, perPod(rep.Baseline, rep.Retained, n))
	x.r.charts.sync = append(x.r.charts.sync, syncPoint{Tag: tag, Enc: enc, Side: side, N: n,
		Seconds: rep.SyncSeconds, RetainedMB: mb(rep.Retained), PeakMB: mb(rep.PeakInUse)})
	return nil
}

func (x *runner) relist(ch *childProc, side, enc string, n int, tag string) error {
	name, end, err := x.step(side, "relist", tag)
	if err != nil {
		return err
	}
	arm, err := ch.call(command{Op: "relist-arm", Step: name})
	if err != nil {
		return err
	}
	if err := x.c.forceRelist(); err != nil {
		return err
	}
	rep, err := ch.call(command{Op: "relist-wait", N: n})
	if err != nil {
		return err
	}
	if err := end(); err != nil {
		return err
	}
	x.r.add("relist "+tag, "s", "lower", side, rep.Seconds)
	x.r.add("peak heap relist "+tag+" (live)", "MB", "lower", side, mb(rep.PeakLive))
	x.r.add("peak heap relist "+tag+" (in use)", "MB", "lower", side, mb(rep.PeakInUse))
	x.r.add("peak heap relist / own steady "+tag+" (live)", "×", "lower", side, float64(rep.PeakLive)/float64(arm.Steady))
	x.r.add("relist notifications for unchanged pods "+tag, "count", "–", side, float64(rep.Unchanged))
	x.r.charts.relist(side, tag, arm.Steady, rep.HeapOverTime)
	return nil
}

// burst asks the side to expect m updates, has start write them (or
// release them), and records the rate and latency. start returns when the
// updates became available to the informer.
func (x *runner) burst(ch *childProc, side string, m int, tag, what string, start func() (time.Time, error)) error {
	name, end, err := x.step(side, what, tag)
	if err != nil {
		return err
	}
	if _, err := ch.call(command{Op: "events-arm", Step: name}); err != nil {
		return err
	}
	since, err := start()
	if err != nil {
		return err
	}
	rep, err := ch.call(command{Op: "events-wait", N: m, Since: since.UnixNano()})
	if err != nil {
		return err
	}
	if err := end(); err != nil {
		return err
	}
	x.r.add(fmt.Sprintf("%s %s (%d updates)", what, tag, m), "events/s", "higher", side, float64(rep.Events)/rep.Seconds)
	x.r.add(fmt.Sprintf("%s cpu per event %s", what, tag), "µs", "lower", side, rep.CPUSeconds/float64(rep.Events)*1e6)
	// The pipeline rows (components.go) leave decoding out; this one is
	// everything the informer's process allocated over the step.
	x.r.add(fmt.Sprintf("%s allocs per event %s (end to end, decoding included)", what, tag), "allocs", "lower", side,
		float64(rep.Allocs)/float64(rep.Events))
	if what == "burst" {
		x.r.add("latency p50 burst "+tag, "ms", "lower", side, rep.P50*1000)
		x.r.add("latency p99 burst "+tag, "ms", "lower", side, rep.P99*1000)
	}
	return nil
}

func (x *runner) manyHandlers(side, enc string, n, m, handlers, round int) error {
	ch, err := x.spawn(side, enc, false, handlers, true)
	if err != nil {
		return err
	}
	defer ch.close()
	if _, err := ch.call(command{Op: "sync", N: n}); err != nil {
		return err
	}
	if _, err := ch.call(command{Op: "events-arm"}); err != nil {
		return err
	}
	since, err := x.c.writeUpdates(m, 2000+round)
	if err != nil {
		return err
	}
	rep, err := ch.call(command{Op: "events-wait", N: m, Since: since.UnixNano()})
	if err != nil {
		return err
	}
	tag := fmt.Sprintf("%d handlers one slow %s %s", handlers, sizeName(n), enc)
	x.r.add("burst "+tag, "events/s", "higher", side, float64(rep.Events)/rep.Seconds)
	x.r.add("latency p99 "+tag, "ms", "lower", side, rep.P99*1000)
	return nil
}

// churnHeap syncs a side on cluster c, updates every pod once in random
// order (cluster.churn) and records, in the rows whose names end with
// what, the informer's CPU per update over the churn and, in JSON, the
// heap per cached pod after it: objects decoded one by one from watch
// events, as a cache holds them after hours of a real cluster, not the
// list the informer started from.
func (x *runner) churnHeap(c *cluster, what, side, enc string, n, round int) error {
	log.Printf("%s %s, %d pods%s", side, enc, n, what)
	ch, err := c.spawn(x.ctx, sideConfig{Side: side, Encoding: enc, Handlers: 1, Profile: x.profileDir})
	if err != nil {
		return err
	}
	defer ch.close()
	synced, err := ch.call(command{Op: "sync", N: n})
	if err != nil {
		return err
	}
	tag := fmt.Sprintf("%s %s%s", sizeName(n), enc, what)
	name, end, err := x.step(side, "churn", tag)
	if err != nil {
		return err
	}
	if _, err := ch.call(command{Op: "events-arm", Step: name}); err != nil {
		return err
	}
	since, err := c.churn(3000 + round)
	if err != nil {
		return err
	}
	rep, err := ch.call(command{Op: "events-wait", N: n, Since: since.UnixNano()})
	if err != nil {
		return err
	}
	if err := end(); err != nil {
		return err
	}
	x.r.add("cpu per update "+tag, "µs", "lower", side, rep.CPUSeconds/float64(rep.Events)*1e6)
	if enc != "json" {
		return nil
	}
	after, err := ch.call(command{Op: "heap", Step: name})
	if err != nil {
		return err
	}
	if after.Cached != n {
		return fmt.Errorf("%s: %d pods cached after the churn, want %d", side, after.Cached, n)
	}
	x.r.add("heap per cached pod "+tag, "KB", "lower", side, perPod(synced.Baseline, after.Retained, n))
	return nil
}

// mixedHeap seeds a second server with n pods of which 30% have a
// template of their own (realpod.Mixed) and records each side's heap per
// cached pod once synced, rounds times, the sides in turn; then the same
// after a random-order churn of that population.
func (x *runner) mixedHeap(n, rounds int) error {
	c, err := newCluster(x.window)
	if err != nil {
		return err
	}
	defer c.srv.Close()
	c.pod = realpod.Mixed
	if err := c.grow(n); err != nil {
		return err
	}
	unique := fmt.Sprintf("%d%% unique templates", 100*uniqueEvery/uniqueOf)
	for round := range max(rounds, 2) {
		for _, side := range sides(round) {
			log.Printf("%s json, %d pods, %s", side, n, unique)
			ch, err := c.spawn(x.ctx, sideConfig{Side: side, Encoding: "json", Handlers: 1})
			if err != nil {
				return err
			}
			runtime.GC()
			rep, err := ch.call(command{Op: "sync", N: n})
			ch.close()
			if err != nil {
				return err
			}
			x.r.add(fmt.Sprintf("heap per cached pod %s json, %s", sizeName(n), unique),
				"KB", "lower", side, perPod(rep.Baseline, rep.Retained, n))
		}
	}
	// After the rows above, which it changes the pods of.
	for round := range max(rounds, 2) {
		for _, side := range sides(round) {
			if err := x.churnHeap(c, ", "+unique+", after random-order churn", side, "json", n, round); err != nil {
				return err
			}
		}
	}
	return nil
}

// perPod is the heap a cache added, in KB per pod.
func perPod(baseline, retained uint64, n int) float64 {
	return float64(retained-min(baseline, retained)) / float64(n) / 1000
}

func sizeName(n int) string {
	if n%1000 == 0 {
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

func mb(b uint64) float64 { return float64(b) / 1e6 }
