package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/seed31a95821/informer/metrics"
)

// probes is the controller's operational face: /metrics in the Prometheus
// text format, /healthz (the process answers) and /readyz (its caches have
// synced, so it acts on the whole picture), which a Deployment's probes
// and a Prometheus scrape config point at.
func probes(reg *metrics.Registry, ready func() bool) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", reg.Handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready() {
			http.Error(w, "caches not synced", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	return mux
}

// serve serves h on addr until ctx ends; it returns once the listener is
// open, and the returned function waits for the server to stop.
func serve(ctx context.Context, addr string, h http.Handler) (wait func() error, err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	stop := context.AfterFunc(ctx, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	})
	return func() error {
		err := <-done
		stop()
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}, nil
}
