package informer

import (
	"strconv"

	"github.com/seed31a95821/informer/metrics"
)

// collector reports the informer's figures, read from the Stats of its
// reflector, queue and processor when the registry is gathered: the event
// path does no metrics work at all. Run registers it for as long as it runs.
func (s *SharedInformer[T]) collector() metrics.Collector {
	name := s.opts.Name
	return metrics.CollectorFunc(func(emit func(*metrics.Desc, metrics.Sample)) {
		one := func(d *metrics.Desc, v float64, labels ...string) {
			emit(d, metrics.Sample{LabelValues: append([]string{name}, labels...), Value: v})
		}
		st := s.refl.Stats()
		one(metrics.InformerLists, float64(st.Lists+st.WatchListSyncs))
		one(metrics.InformerWatches, float64(st.Watches))
		one(metrics.InformerRelists, float64(st.Relists))
		for t, n := range st.Events {
			one(metrics.InformerEvents, float64(n), string(t))
		}
		for k, n := range st.Errors {
			one(metrics.InformerErrors, float64(n), k.String())
		}
		one(metrics.InformerLastSyncedRV, resourceVersionValue(st.LastSyncResourceVersion))
		one(metrics.InformerSynced, boolValue(s.HasSynced()))
		one(metrics.InformerQueueDepth, float64(s.queue.Stats().Depth))
		for _, h := range s.proc.HandlerStats() {
			one(metrics.InformerHandlerPending, float64(h.Pending), h.Name)
			one(metrics.InformerHandlerDelivered, float64(h.Delivered), h.Name)
			one(metrics.InformerHandlerCoalesced, float64(h.Coalesced), h.Name)
			one(metrics.InformerHandlerPanics, float64(h.Panics), h.Name)
		}
	})
}

// resourceVersionValue is rv as a number when it is one, 0 otherwise. A
// resourceVersion is opaque to clients, but etcd's are revisions, and a
// dashboard that sees the number climb knows the informer keeps up.
func resourceVersionValue(rv string) float64 {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return 0
	}
	return float64(n)
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
