package realapi

import (
	"context"
	"os"
	"path/filepath"
	"strings"
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
	return c
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
