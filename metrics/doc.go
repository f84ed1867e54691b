// Package metrics holds the figures the library's parts report, and writes
// them in the Prometheus text format, without depending on a metrics
// library.
//
// A Registry is the one place figures are kept. A part that is given one
// (workqueue.Options.Metrics, informer.Options.Metrics, wire.Options.Metrics)
// registers a Collector that reads the part's own Stats when the Registry is
// gathered, so counters and gauges cost nothing between scrapes: the queue
// and the informer already count what they do. Only figures that need a time
// per event, the histograms, are recorded as events happen, and only when a
// Registry is set. A nil *Registry is the no-op: every method does nothing.
//
// The names are the ones Kubernetes dashboards already chart (workqueue_*,
// rest_client_*), plus informer_* for what client-go does not expose; see
// names.go. WriteText (and Handler) serve them to a Prometheus scraper; the
// module github.com/seed31a95821/informer/metrics/prometheus feeds the same
// Registry into a prometheus/client_golang registry for programs that
// already have one. Either way there is one source of figures.
package metrics
