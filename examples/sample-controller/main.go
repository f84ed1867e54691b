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

	"github.com/seed31a95821/informer/kubeconfig"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the cluster (a list, as $KUBECONFIG)")
	workers := flag.Int("workers", 2, "how many Foos are synced at once")
	healthAddr := flag.String("health-addr", "127.0.0.1:8081", "address of /metrics, /healthz and /readyz")
	identity := flag.String("leader-elect-identity", "", "run as one replica of several under leader election, with this unique name (a pod name)")
	leaseNamespace := flag.String("leader-elect-namespace", "default", "namespace of the Lease named "+agentName)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *kubeconfig, *workers, *healthAddr, *identity, *leaseNamespace); err != nil {
		slog.Error(agentName, "err", err)
		os.Exit(1)
	}
}

// run runs the controller and its health endpoints until ctx ends.
func run(ctx context.Context, kubeconfigs string, workers int, healthAddr, identity, leaseNamespace string) error {
	if kubeconfigs == "" {
		return errors.New("give -kubeconfig")
	}
	loaded, err := kubeconfig.LoadingRules{Paths: filepath.SplitList(kubeconfigs)}.Load()
	if err != nil {
		return err
	}
	c, err := NewController(loaded.Config, workers, identity, leaseNamespace)
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
	srv := &http.Server{Handler: endpoints(c.Ready, c.metrics.Handler()), ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	err = c.Run(ctx)
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = errors.Join(err, srv.Shutdown(shutdown))
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr) // the endpoints failed, not only stopped
	}
	return err
}

// endpoints answers /healthz while the process runs, /readyz once ready
// says so, and /metrics with the figures.
func endpoints(ready func() bool, metrics http.Handler) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
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
