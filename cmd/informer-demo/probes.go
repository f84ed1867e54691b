package main

import (
	"net/http"

	"github.com/seed31a95821/informer/metrics"
)

// probes are the demo's operational endpoints, served with the live page:
// /metrics (the informers' and requests' figures in the Prometheus text
// format), /healthz (the process answers) and /readyz (both caches have
// synced). They are what a Deployment's probes and a Prometheus scrape
// config point at.
type probes struct {
	metrics *metrics.Registry
	ready   func() bool
}

// register adds the three endpoints to mux.
func (p probes) register(mux *http.ServeMux) {
	mux.Handle("GET /metrics", p.metrics.Handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !p.ready() {
			http.Error(w, "caches not synced", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
}
