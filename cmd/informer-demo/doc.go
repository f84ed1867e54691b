// Command informer-demo shows the informer stack at work: it starts the
// in-process fake API server with a few thousand pods and a churn generator,
// runs a factory with pod and service informers and three handlers (two fast
// counters and one slow on purpose), shows the caches filling, then prints a
// legend and one status line a second: elapsed time, events per second
// (changes the watches delivered, not the initial list), cache sizes, each
// handler's lag and mean time per call, watch restarts and relists. At exit it
// prints a summary: events, restarts, relists, tombstones, and whether each
// handler caught up.
//
//	go run ./cmd/informer-demo                      # embedded fake API server
//	go run ./cmd/informer-demo -duration 10s        # stop by itself
//	go run ./cmd/informer-demo -http 127.0.0.1:8081 # and a live page
//	go run ./cmd/informer-demo -kubeconfig ~/.kube/config   # a real cluster, read-only
//	go run ./cmd/informer-demo -kubeconfig a.yaml:b.yaml -context dev   # merged as $KUBECONFIG is
//
// With -http the demo also serves a page (page.go; the HTML, script and style
// are in web/, with the vendored uPlot chart library) that draws the pipeline
// as its boxes (server, each reflector's state, queue depth, cache size, one
// lane per handler with its lag), charts events/s and handler lag, lists
// what the reflectors did as a timeline, and has buttons that inject
// fakeapi's faults (faults.go): drop the watches, compact the history (a 410
// and a relist, with tombstones), stall the streams (the watchdog), a 429
// burst, a restart. The monitor (monitor.go) samples the informers for both
// views. The page has no authentication and its buttons change the embedded
// server: bind it to a loopback address. Against a real cluster (-kubeconfig)
// the buttons are disabled: the demo is read-only there. The same address
// serves /metrics (the informers' and requests' figures, metrics.Registry in
// the Prometheus text format), /healthz and /readyz (both caches synced);
// probes.go.
//
// It stops cleanly on Ctrl-C (SIGINT), SIGTERM, or after -duration.
package main
