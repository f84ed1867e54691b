package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// syncBuffer lets the test read what the demo writes from its goroutine.
type syncBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}
func (b *syncBuffer) String() string { b.mu.Lock(); defer b.mu.Unlock(); return b.buf.String() }

func TestDemoSyncsReportsAndStopsCleanly(t *testing.T) {
	defer goleak.VerifyNone(t)
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- run(ctx, config{pods: 300, services: 5, churn: 200, seed: 1, slowEvery: time.Millisecond}, &out)
	}()
	// Wait for two summary lines, then stop as Ctrl-C would.
	require.Eventually(t, func() bool { return strings.Count(out.String(), "| events/s") >= 2 }, 30*time.Second, 10*time.Millisecond)
	cancel()
	require.NoError(t, <-done)

	text := out.String()
	require.Contains(t, text, "with 300 pods and 5 services")
	require.Contains(t, text, "synced in")
	require.Contains(t, text, "cache pods")
	require.Contains(t, text, "slow-pods lag")
	require.Contains(t, text, "legend:", "a header explains the columns")
	require.Regexp(t, `t +\d+s \| events/s`, text, "each line starts with the elapsed time")
	require.Regexp(t, `slow-pods lag \d+ \(max \d+\) avg \d`, text, "a handler's mean time per call")
	require.Regexp(t, `summary after \d+s: \d+ events, \d+ watch restarts, \d+ relists, \d+ tombstones`, text)
	require.Regexp(t, `slow-pods +\d+ calls, avg .*, worst backlog \d+; caught up with the initial list at [\d.]+s`, text,
		"the summary says whether the slow handler caught up")
	require.True(t, strings.HasSuffix(text, "stopped\n"), text)
}
