package main

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"time"
)

// web holds the page: HTML, script, style, and the vendored chart library
// (uPlot, MIT, web/vendor/LICENSE).
//
//go:embed web
var web embed.FS

// page is the live dashboard's HTTP server: the static page, the state it
// polls, and the fault buttons.
type page struct {
	ctx    context.Context
	url    string
	ln     net.Listener
	server *http.Server
}

// startPage listens on addr; serve then answers until ctx is done.
func startPage(ctx context.Context, addr string, m *monitor, f *faultInjector, pr probes) (*page, error) {
	static, err := fs.Sub(web, "web")
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("live page: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /", http.FileServerFS(static))
	pr.register(mux)
	mux.HandleFunc("GET /api/state", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, m.snapshot()) })
	mux.HandleFunc("GET /api/faults", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"available": f.srv != nil, "faults": faults})
	})
	mux.HandleFunc("POST /api/fault/{name}", func(w http.ResponseWriter, r *http.Request) {
		if !sameOriginJSON(r) {
			writeJSON(w, http.StatusForbidden, map[string]string{"error": "faults are injected by the page itself: a JSON POST from its own origin"})
			return
		}
		if err := f.inject(r.PathValue("name")); err != nil {
			code := http.StatusNotFound
			if errors.Is(err, errNoFaults) {
				code = http.StatusConflict
			}
			writeJSON(w, code, map[string]string{"error": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"injected": r.PathValue("name")})
	})
	p := &page{ctx: ctx, url: "http://" + ln.Addr().String() + "/", ln: ln, server: &http.Server{
		Handler:           addressedByIP(mux),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}}
	return p, nil
}

// serve answers requests until the context is done, then closes the server.
func (p *page) serve() {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = p.server.Serve(p.ln) // returns once Shutdown or Close is called
	}()
	<-p.ctx.Done()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if p.server.Shutdown(ctx) != nil {
		_ = p.server.Close()
	}
	<-done
}

// sameOriginJSON reports whether a request may inject a fault: it says it
// is JSON (which a cross-site form cannot, and which makes a browser ask
// first, with a preflight this server does not grant, before another site's
// script may send it) and, if it names an origin, names the page's own. So
// a web page the learner visits elsewhere cannot press the buttons.
func sameOriginJSON(r *http.Request) bool {
	if r.Header.Get("Content-Type") != "application/json" {
		return false
	}
	origin := r.Header.Get("Origin")
	return origin == "" || origin == "http://"+r.Host
}

// addressedByIP refuses a request whose Host is a name other than
// localhost. A site the learner visits could make its own name resolve to
// 127.0.0.1 (DNS rebinding): its script would then be same-origin with
// this page, by name, and could press the buttons and read the state. It
// cannot make the browser send an IP address or localhost as the Host.
func addressedByIP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		if host != "localhost" && net.ParseIP(strings.Trim(host, "[]")) == nil {
			writeJSON(w, http.StatusForbidden, map[string]string{"error": "address the page by IP or localhost"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
