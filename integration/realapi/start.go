package realapi

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// startTimeout bounds the build check and the start. A start from cached binaries takes
// seconds; a cold build takes far longer than go test's default timeout, which is why CI runs
// the script's build step before go test (see the package doc).
const startTimeout = 20 * time.Minute

// Start starts a cluster with default Options for the test t and stops it when t ends.
// Under -short it skips t; any other failure fails t with the script's message.
func Start(t testing.TB) *Cluster {
	t.Helper()
	return StartWith(t, Options{})
}

// StartWith is Start with options. When Options.Dir is empty the cluster lives in t.TempDir(),
// and when t has failed the servers' last log lines are logged before it is stopped.
func StartWith(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("realapi: needs a real kube-apiserver and etcd; skipped under -short")
	}
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	if opts.Log == nil {
		opts.Log = testLogWriter{t}
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	c, err := Launch(ctx, opts)
	if err != nil {
		t.Fatalf("%v", err)
	}
	register(t, c)
	return c
}

// StartAll starts one cluster per Options, all at once, for the test t and
// stops them when t ends. Starting them together costs about the wall time of
// one start (each is mostly waiting for its servers to come up), which is
// what a test that needs two configurations, say with and without the watch
// cache, wants. Like StartWith it skips t under -short and fails t with the
// script's message otherwise; the clusters come back in the order of opts.
func StartAll(t testing.TB, opts ...Options) []*Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("realapi: needs a real kube-apiserver and etcd; skipped under -short")
	}
	// The build step is shared by every cluster; running it once first keeps
	// two concurrent builds from racing in the same cache directory.
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := Build(ctx, testLogWriter{t}); err != nil {
		t.Fatalf("%v", err)
	}
	clusters := make([]*Cluster, len(opts))
	errs := make([]error, len(opts))
	var wg sync.WaitGroup
	for i, o := range opts {
		if o.Dir == "" {
			o.Dir = t.TempDir()
		}
		if o.Log == nil {
			o.Log = testLogWriter{t}
		}
		wg.Go(func() { clusters[i], errs[i] = Launch(ctx, o) })
	}
	wg.Wait()
	for _, c := range clusters {
		if c != nil {
			register(t, c) // stopped by its cleanup even if another failed
		}
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("%v", err)
	}
	return clusters
}

// register logs a started cluster and stops it when t ends.
func register(t testing.TB, c *Cluster) {
	t.Helper()
	t.Logf("realapi: %s ready after %v (watch cache %v), kubeconfig %s", c.URL, c.ReadyAfter, c.WatchCache, c.Kubeconfig)
	// Registered after t.TempDir, so it runs before the directory is removed.
	t.Cleanup(func() {
		if t.Failed() {
			logTail(t, filepath.Join(c.Dir, "kube-apiserver.log"))
			logTail(t, filepath.Join(c.Dir, "etcd.log"))
		}
		if err := c.Stop(); err != nil {
			t.Errorf("%v", err)
		}
	})
}

// testLogWriter sends the script's progress lines to t.Log.
type testLogWriter struct{ t testing.TB }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func logTail(t testing.TB, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Logf("realapi: %v", err)
		return
	}
	t.Logf("realapi: last lines of %s:\n%s", path, lastLines(string(data), 30))
}
