package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/seed31a95821/informer/fakeapi"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "fakeapi:", err)
		}
		os.Exit(2)
	}
}

// config is the command line.
type config struct {
	listen           string
	pods             int
	namespaces       string
	token            string
	bookmarkInterval time.Duration
	compactionWindow int
	kubeconfigOut    string // write a kubeconfig for the server here
	tls              bool   // serve HTTPS with a generated CA
	crds             crdFiles
}

// servesTLS: asked for, or implied by a token in a kubeconfig, which
// kubectl would refuse to send over plain HTTP.
func (c config) servesTLS() bool { return c.tls || (c.kubeconfigOut != "" && c.token != "") }

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("fakeapi", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.listen, "listen", fakeapi.DefaultAddr, "address to listen on (host:port; port 0 picks a free one)")
	fs.IntVar(&c.pods, "pods", 0, "number of pods to seed before serving")
	fs.StringVar(&c.namespaces, "namespaces", "default", "comma-separated namespaces the seeded pods spread over")
	fs.StringVar(&c.token, "token", "", "bearer token clients must send (empty: no authentication)")
	fs.DurationVar(&c.bookmarkInterval, "bookmark-interval", fakeapi.DefaultBookmarkInterval, "interval between watch bookmarks")
	fs.IntVar(&c.compactionWindow, "compaction-window", fakeapi.DefaultCompactionWindow, "events kept before the history is compacted")
	fs.StringVar(&c.kubeconfigOut, "kubeconfig-out", "", "write a kubeconfig for this server to FILE (with -token: served over TLS with a generated CA)")
	fs.BoolVar(&c.tls, "tls", false, "serve HTTPS with a generated self-signed CA (implied by -token with -kubeconfig-out)")
	registerCRDFlag(fs, &c.crds)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if c.pods < 0 {
		return c, fmt.Errorf("-pods must not be negative")
	}
	return c, nil
}

// run serves until ctx is done. The URL is the first line written to stdout.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	opts := fakeapi.Options{
		Addr:             c.listen,
		Token:            c.token,
		BookmarkInterval: c.bookmarkInterval,
		CompactionWindow: c.compactionWindow,
	}
	var caPEM []byte
	if c.servesTLS() {
		host, _, _ := net.SplitHostPort(c.listen)
		certs, err := newSelfSignedTLS(host)
		if err != nil {
			return fmt.Errorf("generating a TLS certificate: %w", err)
		}
		opts.TLS, caPEM = certs.config, certs.caPEM
	}
	srv, err := fakeapi.NewServer(opts)
	if err != nil {
		return err
	}
	defer srv.Close()
	if err := createNamespaces(srv, c.namespaces); err != nil {
		return err
	}
	if err := serveCRDs(srv, c.crds); err != nil {
		return err
	}
	if c.kubeconfigOut != "" {
		if err := writeKubeconfig(c.kubeconfigOut, srv.URL(), caPEM, c.token); err != nil {
			return err
		}
	}
	if c.pods > 0 {
		start := time.Now()
		if err := srv.SeedPods(strings.Split(c.namespaces, ","), c.pods); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "seeded %d pods in %v\n", c.pods, time.Since(start).Round(time.Millisecond))
	}
	if _, err := fmt.Fprintln(stdout, srv.URL()); err != nil {
		return err
	}
	if c.kubeconfigOut != "" {
		fmt.Fprintf(stderr, "serving; try: kubectl --kubeconfig %s get pods -A\n", c.kubeconfigOut)
	} else {
		fmt.Fprintf(stderr, "serving; try: kubectl --server %s get pods -A\n", srv.URL())
	}
	<-ctx.Done()
	fmt.Fprintln(stderr, "shutting down")
	return nil
}
