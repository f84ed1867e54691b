package main

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBinaryServesAndStopsOnSIGTERM builds the command, runs it, reads the
// URL from the first line of stdout, uses the server, and stops it with
// SIGTERM.
func TestBinaryServesAndStopsOnSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	bin := filepath.Join(t.TempDir(), "fakeapi")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())

	cmd := exec.Command(bin, "-listen", "127.0.0.1:0", "-pods", "50", "-namespaces", "a,b")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Kill()
	}()

	lines := bufio.NewScanner(stdout)
	require.True(t, lines.Scan(), "no first line; stderr: %s", stderr.String())
	url := lines.Text()
	require.Regexp(t, `^http://127\.0\.0\.1:\d+$`, url)

	resp, err := http.Get(url + "/api/v1/namespaces/b/pods")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-exited:
		require.NoError(t, err, "clean exit on SIGTERM; stderr: %s", stderr.String())
	case <-time.After(20 * time.Second):
		t.Fatal("still running 20s after SIGTERM")
	}
	require.Contains(t, stderr.String(), "seeded 50 pods")
}

// syncBuffer collects the child's stderr, which exec copies from another
// goroutine while the test may read it.
type syncBuffer struct {
	mu  sync.Mutex // guards buf
	buf strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestFlags(t *testing.T) {
	var sink strings.Builder
	c, err := parseFlags([]string{"-listen", "127.0.0.1:9", "-pods", "3", "-token", "x"}, &sink)
	require.NoError(t, err)
	require.Equal(t, config{listen: "127.0.0.1:9", pods: 3, namespaces: "default", token: "x",
		bookmarkInterval: time.Minute, compactionWindow: 10000}, c)
	_, err = parseFlags([]string{"-pods", "-1"}, &sink)
	require.Error(t, err)
	_, err = parseFlags([]string{"extra"}, &sink)
	require.Error(t, err)
	_, err = parseFlags([]string{"-nope"}, &sink)
	require.Error(t, err)
}
