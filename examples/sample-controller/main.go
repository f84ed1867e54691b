package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/seed31a95821/informer/reflector/wire"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the cluster (a list, as $KUBECONFIG)")
	workers := flag.Int("workers", 2, "how many Foos are synced at once")
	healthAddr := flag.String("health-addr", "127.0.0.1:8081", "address of /healthz and /readyz")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *kubeconfig, *workers, *healthAddr); err != nil {
		slog.Error(agentName, "err", err)
		os.Exit(1)
	}
}

// run runs the controller and its health endpoints until ctx ends.
func run(ctx context.Context, kubeconfig string, workers int, healthAddr string) error {
	if kubeconfig == "" {
		return errors.New("give -kubeconfig")
	}
	loaded, err := wire.LoadingRules{Paths: filepath.SplitList(kubeconfig)}.Load()
	if err != nil {
		return err
	}
	c, err := NewController(loaded.Config, workers)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", healthAddr)
	if err != nil {
		return err
	}
	// The first line of stdout says where the endpoints are (with port 0,
	// the port the system chose).
	fmt.Printf("http://%s\n", ln.Addr())
	srv := &http.Server{Handler: healthMux(c.Ready), ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	err = c.Run(ctx)
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return errors.Join(err, srv.Shutdown(shutdown), ignoreClosed(<-served))
}

// healthMux answers /healthz while the process runs and /readyz once
// ready says so.
func healthMux(ready func() bool) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready() {
			http.Error(w, "caches not synced", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	return mux
}

func ignoreClosed(err error) error {
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
