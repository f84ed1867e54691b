package workqueue

import (
	"github.com/seed31a95821/informer/metrics"
)

// instruments is what a queue with Options.Metrics keeps for its figures.
// The counters and gauges (depth, adds, retries, unfinished work, longest
// running) are read from Stats when the Registry is gathered, so they cost
// the queue nothing. The two histograms need a time per item, and are the
// only price of metrics on the hot path: a map write or two per op, paid
// only by a queue with a Registry. Every field is guarded by the queue's mu.
type instruments[T comparable] struct {
	queueDur, workDur *metrics.Observer
	queuedAt          map[T]int64 // dirty items not yet handed out: when they became dirty
	startedAt         map[T]int64 // items in hand: when Get handed them out
	unregister        func()
}

// setUpMetrics registers the queue in opts.Metrics, if any; setUp calls it.
func (q *Queue[T]) setUpMetrics() {
	r, name := q.opts.Metrics, q.opts.Name
	if r == nil {
		return
	}
	q.m = &instruments[T]{
		queueDur:  r.Observer(metrics.WorkqueueQueueDuration, name),
		workDur:   r.Observer(metrics.WorkqueueWorkDuration, name),
		queuedAt:  map[T]int64{},
		startedAt: map[T]int64{},
	}
	q.m.unregister = r.Register(metrics.CollectorFunc(func(emit func(*metrics.Desc, metrics.Sample)) {
		s := q.Stats()
		l := []string{name}
		emit(metrics.WorkqueueDepth, metrics.Sample{LabelValues: l, Value: float64(s.Depth)})
		emit(metrics.WorkqueueAdds, metrics.Sample{LabelValues: l, Value: float64(s.Adds)})
		emit(metrics.WorkqueueRetries, metrics.Sample{LabelValues: l, Value: float64(s.Retries)})
		emit(metrics.WorkqueueUnfinishedWork, metrics.Sample{LabelValues: l, Value: s.UnfinishedWork.Seconds()})
		emit(metrics.WorkqueueLongestRunning, metrics.Sample{LabelValues: l, Value: s.LongestRunning.Seconds()})
	}))
}

// markQueuedLocked notes that item became dirty: its wait starts now. An
// item added again while it waits keeps its first time, as its entry keeps
// its place.
func (q *Queue[T]) markQueuedLocked(item T) {
	if _, ok := q.m.queuedAt[item]; !ok {
		q.m.queuedAt[item] = q.nowLocked()
	}
}

// markGotLocked observes item's wait and starts timing its work, Get
// having read the clock at now.
func (q *Queue[T]) markGotLocked(item T, now int64) {
	if t, ok := q.m.queuedAt[item]; ok {
		q.m.queueDur.Observe(float64(now-t) / 1e9)
		delete(q.m.queuedAt, item)
	}
	q.m.startedAt[item] = now
}

// markDoneLocked observes item's work.
func (q *Queue[T]) markDoneLocked(item T) {
	if t, ok := q.m.startedAt[item]; ok {
		q.m.workDur.Observe(float64(q.nowLocked()-t) / 1e9)
		delete(q.m.startedAt, item)
	}
}

// stopMetricsLocked takes the queue out of its Registry at ShutDown, so
// that a stopped queue is neither scraped nor kept alive by it. Items that
// will never be handed out are forgotten.
func (q *Queue[T]) stopMetricsLocked() {
	if q.m == nil {
		return
	}
	q.m.unregister()
	clear(q.m.queuedAt)
}
