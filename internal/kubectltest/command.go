package kubectltest

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Path returns the kubectl on the PATH, for a test that drives one. It
// skips the test under -short (such a test builds and starts commands
// too) and when there is no kubectl.
func Path(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds commands and runs kubectl")
	}
	path, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not on the PATH")
	}
	return path
}

// Build compiles the package pkg (an import path, or "." for the test's
// own) into the binary bin.
func Build(t testing.TB, bin, pkg string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go build %s: %v", pkg, err)
	}
}

// Start runs bin with args, a command that prints its URL on the first
// line of its stdout (cmd/fakeapi, the sample controller's health
// server), and returns that line. Its stderr goes to the test's log. When
// the test ends the command gets a SIGTERM, and the test fails unless it
// then exits cleanly within 20 s.
func Start(t testing.TB, bin string, args ...string) string {
	t.Helper()
	name := filepath.Base(bin)
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = t.Output() // into the test's log, where a failure shows it
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("%s did not exit cleanly on SIGTERM: %v (its stderr is in the log)", name, err)
			}
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			t.Errorf("%s did not stop on SIGTERM", name)
		}
	})
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() {
		t.Fatalf("%s printed no URL (its stderr is in the log)", name)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }() // a full pipe would block the command
	return strings.TrimSpace(lines.Text())
}
