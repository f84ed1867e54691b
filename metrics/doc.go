// Package metrics holds the figures the library's parts report, and writes
// them in the Prometheus text format, without depending on a metrics
// library.
//
// A Registry is the one place figures are kept, and it is passed to each
// part that should report: workqueue.Options.Metrics,
// informer.Options.Metrics (a factory passes it on to the rest.Config of
// its one rest.Client), rest.Config.Metrics (every request of a
// rest.Client, the informers' and package client's). The queue and the informer register a Collector
// that reads their own Stats when the Registry is gathered, so counters and
// gauges cost nothing between scrapes: the parts already count what they do.
// Only the figures that need a time per event, the histograms and the
// request counts, are recorded as events happen, and only when a Registry is
// set. A nil *Registry is the no-op: every method does nothing. LeaderStatus
// and ShardOwned are declared for the leader election and sharding parts to
// report through a CollectorFunc.
//
// The names are the ones Kubernetes dashboards already chart (workqueue_*,
// rest_client_*), plus informer_* for what client-go does not expose; see
// names.go. WriteText (and Handler) serve them to a Prometheus scraper; the
// module github.com/seed31a95821/informer/metrics/prometheus feeds the same
// Registry into a prometheus/client_golang registry for programs that
// already have one. Either way there is one source of figures.
package metrics
