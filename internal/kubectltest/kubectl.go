package kubectltest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Kubectl runs the kubectl at Path against one kubeconfig, in the private
// directory Dir (its HOME and cache, and where Write puts files).
type Kubectl struct {
	t    testing.TB
	path string
	dir  string
	env  []string
}

// New returns a Kubectl for the kubeconfig file, with dir as its HOME and
// cache directory.
func New(t testing.TB, path, dir, kubeconfig string) *Kubectl {
	return &Kubectl{t: t, path: path, dir: dir,
		env: append(os.Environ(), "KUBECONFIG="+kubeconfig, "HOME="+dir, "KUBECACHEDIR="+filepath.Join(dir, "cache"))}
}

// Try runs kubectl with args, for at most a minute, and returns its
// combined output, trimmed, and how it exited.
func (k *Kubectl) Try(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, k.path, append([]string{"--cache-dir", filepath.Join(k.dir, "cache")}, args...)...)
	cmd.Env = k.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	k.t.Logf("$ kubectl %s\n%s", strings.Join(args, " "), out.String())
	return strings.TrimSpace(out.String()), err
}

// Run is Try for a command that must succeed: it fails the test if not.
func (k *Kubectl) Run(args ...string) string {
	k.t.Helper()
	out, err := k.Try(args...)
	if err != nil {
		k.t.Fatalf("kubectl %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return out
}

// Eventually runs kubectl until it succeeds with want as its output, for
// at most 30 s, and fails the test if it never does.
func (k *Kubectl) Eventually(want string, args ...string) {
	k.t.Helper()
	var out string
	var err error
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if out, err = k.Try(args...); err == nil && out == want {
			return
		}
		time.Sleep(100 * time.Millisecond) // the pace of a poll, not a synchronisation
	}
	k.t.Fatalf("kubectl %s: got %q (%v), want %q", strings.Join(args, " "), out, err, want)
}

// Read returns the content of the file at path (a manifest of testdata,
// say, to change before applying it).
func (k *Kubectl) Read(path string) string {
	k.t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		k.t.Fatal(err)
	}
	return string(data)
}

// Write writes content to the file name in the Kubectl's directory and
// returns its path, for kubectl's -f.
func (k *Kubectl) Write(name, content string) string {
	k.t.Helper()
	path := filepath.Join(k.dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		k.t.Fatal(err)
	}
	return path
}
