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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/rest"
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
	d, err := newDashboard(rest.Config{Host: srv.URL()}, 0, io.Discard)
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

// A handler's time per event is shown to three significant digits, so that
// a fast handler's few hundred nanoseconds do not read as "0s".
func TestThreeDigits(t *testing.T) {
	for _, c := range []struct {
		in   time.Duration
		want string
	}{
		{0, "0s"},
		{312 * time.Nanosecond, "312ns"},
		{1234 * time.Nanosecond, "1.23µs"},
		{2330128 * time.Nanosecond, "2.33ms"},
		{1500 * time.Millisecond, "1.5s"},
	} {
		require.Equal(t, c.want, threeDigits(c.in).String(), "%d ns", int64(c.in))
	}
}

// events/s counts changes, not the initial list: the handlers catch up on
// thousands of listed pods after the caches sync, which made the first
// summary line show several times the churn rate.
func TestEventsCountChangesOnly(t *testing.T) {
	defer goleak.VerifyNone(t)
	srv, err := fakeapi.NewServer(fakeapi.Options{})
	require.NoError(t, err)
	defer srv.Close()
	require.NoError(t, srv.SeedPods([]string{"default"}, 50))
	d, err := newDashboard(rest.Config{Host: srv.URL()}, 0, io.Discard)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d.factory.Start(ctx)
	defer d.factory.Shutdown()
	for _, l := range d.lanes {
		select {
		case <-l.reg.Synced():
		case <-time.After(20 * time.Second):
			t.Fatal("handlers did not sync")
		}
	}
	require.Zero(t, d.events.Load(), "the 50 listed pods are not events")
	_, err = srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "new"}})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return d.events.Load() == 1 }, 10*time.Second, 5*time.Millisecond,
		"the created pod is one event")
}
