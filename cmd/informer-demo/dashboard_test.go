package main

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/reflector/wire"
)

// While one informer has synced and the other has not, waitForSync must
// wait, not spin on the closed channel of the first (a core at 100% for as
// long as a big cluster's pods take to list).
func TestWaitForSyncBlocksWhileOneInformerLags(t *testing.T) {
	defer goleak.VerifyNone(t)
	srv, err := fakeapi.NewServer(fakeapi.Options{})
	require.NoError(t, err)
	defer srv.Close()
	// Services never sync: every request for them fails.
	srv.Faults().FailNext(fakeapi.Failure{Resource: "services", Count: 1 << 30, Code: 500})
	d, err := newDashboard(wire.Config{Host: srv.URL()}, 0, io.Discard)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	d.factory.Start(ctx)
	defer d.factory.Shutdown()
	done := make(chan bool)
	go func() { done <- d.waitForSync(ctx) }()
	select {
	case <-d.pods.Synced():
	case <-time.After(20 * time.Second):
		t.Fatal("pods did not sync")
	}
	require.Eventually(t, func() bool { return parkedIn("(*dashboard).waitForSync") },
		10*time.Second, 5*time.Millisecond, "waitForSync never blocks once pods have synced")
	cancel()
	require.False(t, <-done)
}

// parkedIn reports whether a goroutine blocked in a select (not running)
// has fn on its stack.
func parkedIn(fn string) bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("[select")) && bytes.Contains(g, []byte(fn)) {
			return true
		}
	}
	return false
}
