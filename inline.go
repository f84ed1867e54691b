package informer

// The inline hand-off, the informer's side (the queue's is
// deltafifo/inline.go). Delete this file and its one hook (the Inline and
// InlineIf options newInformer gives the queue, switched by
// fastPaths.inline), and the informer is still correct, only slower: every
// event then waits in the queue for the consumer goroutine, which must be
// woken for it.
//
// Why it pays: with the hand-off, an event that finds the consumer idle is
// applied by the reflector's goroutine at once, which saves a goroutine
// wake-up per event (bench: BenchmarkPipeline, handlers=1 and 10).

import "k8s.io/apimachinery/pkg/runtime"

// inlineHandlerLimit is the most handlers with which the reflector applies
// an event itself when the consumer is idle. Applying an event costs a
// fixed part (the cache and one append to the processor's journal) plus
// waking the handler goroutines that had caught up and were waiting for it;
// handing the event to the consumer goroutine costs one goroutine wake-up.
// With few handlers that one wake-up dominates, so the reflector applies
// the event itself. With many, the handlers' wake-ups dominate, and a
// consumer that does them while the reflector reads the next events keeps
// both goroutines busy and lets handlers take their notifications in
// batches. The crossover is found with the pipeline benchmarks
// (BenchmarkPipeline in bench/, by number of handlers); docs/perf-log.md
// has the runs that chose 16.
const inlineHandlerLimit = 16

// inlineIf is the queue's InlineIf: the queue hands an event that finds
// it idle to apply at once, on the writer's goroutine, unless there are so
// many handlers that waking them is better done by the consumer, in
// parallel with the watch.
func (s *SharedInformer[T]) inlineIf() bool { return s.proc.Len() <= inlineHandlerLimit }

// Add implements reflector.Store. The queue may have applied obj inline,
// and then no Pop follows that would notice a sync, so the write checks,
// as Replace does.
func (w syncWatchingStore) Add(obj runtime.Object) error {
	err := w.Queue.Add(obj)
	w.wrote(err, resourceVersionOf(obj), false)
	return err
}

// Update implements reflector.Store; see Add.
func (w syncWatchingStore) Update(obj runtime.Object) error {
	err := w.Queue.Update(obj)
	w.wrote(err, resourceVersionOf(obj), false)
	return err
}

// Delete implements reflector.Store; see Add.
func (w syncWatchingStore) Delete(obj runtime.Object) error {
	err := w.Queue.Delete(obj)
	w.wrote(err, resourceVersionOf(obj), false)
	return err
}
