package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/seed31a95821/informer/metrics"
)

// config is what the flags set.
type config struct {
	pods       int
	services   int
	churn      int // writes per second against the fake server
	duration   time.Duration
	kubeconfig string // a path list with $KUBECONFIG semantics
	context    string // kubectl's --context
	seed       int64
	slowEvery  time.Duration // how long the "slow" handler takes per event
	http       string        // serve the live page on this address ("": no page)
}

func main() {
	var c config
	flag.IntVar(&c.pods, "pods", 3000, "pods to seed in the embedded fake API server")
	flag.IntVar(&c.services, "services", 50, "services to seed in the embedded fake API server")
	flag.IntVar(&c.churn, "churn", 300, "writes per second the churn generator makes (0: none)")
	flag.DurationVar(&c.duration, "duration", 0, "stop after this long (0: run until Ctrl-C)")
	flag.StringVar(&c.kubeconfig, "kubeconfig", "", "watch the cluster of this kubeconfig instead of the embedded server (read-only); a list such as a:b is merged as kubectl merges $KUBECONFIG")
	flag.StringVar(&c.context, "context", "", "with -kubeconfig: the context to use (default: current-context)")
	flag.Int64Var(&c.seed, "seed", time.Now().UnixNano(), "seed of the churn generator")
	flag.DurationVar(&c.slowEvery, "slow", 2*time.Millisecond, "time the deliberately slow handler spends per event")
	flag.StringVar(&c.http, "http", "", "serve a live page of the pipeline, with fault buttons, on this address (e.g. 127.0.0.1:8081; no authentication: keep it on loopback)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if c.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.duration)
		defer cancel()
	}
	if err := run(ctx, c, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "informer-demo:", err)
		os.Exit(1)
	}
}

// run is the whole program, minus flag parsing and signals, so that a test
// can drive it.
func run(ctx context.Context, c config, out io.Writer) error {
	cluster, err := connect(ctx, c, out)
	if err != nil {
		return err
	}
	defer cluster.close()

	reg := new(metrics.Registry) // served at /metrics with the page
	opts := cluster.factoryOptions()
	opts.Informer.Metrics = reg
	d, err := newDashboardWith(cluster.config, opts, c.slowEvery, out)
	if err != nil {
		return err
	}
	printLegend(out, cluster.describe(), cluster.srv != nil)
	m := newMonitor(d, cluster.describe(), cluster.serverRV())
	var background sync.WaitGroup // the monitor and the page: both end with ctx
	defer background.Wait()
	background.Go(func() { m.run(ctx) })
	if c.http != "" {
		faults := newFaultInjector(cluster.srv, m)
		defer faults.stop() // before cluster.close: a pending step must not touch a closed server
		page, err := startPage(ctx, c.http, m, faults, probes{metrics: reg, ready: d.synced})
		if err != nil {
			return err
		}
		background.Go(page.serve)
		fmt.Fprintf(out, "live page at %s\n", page.url)
		if ip := page.ln.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
			fmt.Fprintf(out, "warning: the live page listens on %s: anyone who can reach it may inject faults (there is no authentication)\n", ip)
		}
	}
	d.factory.Start(ctx)
	defer d.factory.Shutdown()

	if !d.waitForSync(ctx) {
		return nil // stopped while syncing: not a failure
	}
	if cluster.churn != nil {
		cluster.churn.start(ctx)
		defer cluster.churn.wait()
	}
	d.report(ctx, m)
	m.sample(time.Now())
	printSummary(out, m.snapshot())
	fmt.Fprintln(out, "stopped")
	return nil
}
