//go:build unix

package bench

import (
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// The floor: a reference point for the pipeline benchmarks, not an
// informer. It lists and watches the same replayLW and tells the same
// handlers about every event, through the plainest fan-out there is: the
// goroutine that reads the watch sends each event to one buffered channel
// per handler, and each handler's goroutine counts what it receives. It
// keeps no cache, computes no key, queues nothing and records nothing.
//
// What it costs is the benchmark's own share of every figure (the
// replaying goroutine, the hand-off through the watch's unbuffered channel,
// the counting) plus one channel hop per handler. Seen beside the two
// informers (impl=floor in BenchmarkPipeline), it tells how much of an
// informer's CPU per event is its own work: with one handler the floor is
// a large part of ours, which is why the 0.5x target is tightest there.

// floorChanCap is each handler's channel capacity: enough for the reader
// never to wait on a handler that is merely descheduled for a moment.
const floorChanCap = 256

var floorImpl = pipelineImpl{name: "floor", build: buildFloorPipeline}

// pipelineRunImpls are what BenchmarkPipeline runs and TestPipelineHarness
// checks: the two informers, then the floor.
var pipelineRunImpls = append(pipelineImpls[:len(pipelineImpls):len(pipelineImpls)], floorImpl)

// buildFloorPipeline returns the floor's Run. keys reports nothing: there is
// no cache.
func buildFloorPipeline(lw *replayLW, tally *pipelineTally) (func(context.Context), func() []string, error) {
	run := func(ctx context.Context) {
		if _, err := lw.List(ctx, metav1.ListOptions{}); err != nil {
			return
		}
		w, err := lw.Watch(ctx, metav1.ListOptions{ResourceVersion: "1"})
		if err != nil {
			return
		}
		defer w.Stop()
		var handlers sync.WaitGroup
		chans := make([]chan watch.Event, len(tally.handlers))
		for i, hc := range tally.handlers {
			chans[i] = make(chan watch.Event, floorChanCap)
			handlers.Go(func() { floorHandle(chans[i], tally, hc) })
		}
		floorFanOut(ctx, w.ResultChan(), chans)
		for _, ch := range chans {
			close(ch)
		}
		handlers.Wait()
	}
	return run, func() []string { return nil }, nil
}

// floorFanOut sends every event of in to every channel of out, until in
// closes or ctx is done.
func floorFanOut(ctx context.Context, in <-chan watch.Event, out []chan watch.Event) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-in:
			if !ok {
				return
			}
			for _, ch := range out {
				ch <- ev // the handlers drain their channel until it is closed
			}
		}
	}
}

// floorHandle counts the events of ch for handler hc, by type, until ch is
// closed.
func floorHandle(ch <-chan watch.Event, tally *pipelineTally, hc *pipelineHandlerCount) {
	for ev := range ch {
		switch ev.Type {
		case watch.Added:
			tally.saw(hc, &hc.adds)
		case watch.Modified:
			tally.saw(hc, &hc.updates)
		case watch.Deleted:
			tally.saw(hc, &hc.deletes)
		}
	}
}
