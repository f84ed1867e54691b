package wire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/seed31a95821/informer/internal/testserver"
	"github.com/seed31a95821/informer/rest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// serveThenHang writes stream and then keeps the watch open until the
// client goes away, like a quiet API server.
func serveThenHang(contentType string, stream []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(stream)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
}

// Stop must end the watch even while its goroutine is blocked sending an
// event nobody reads, or blocked reading a silent stream; when Stop
// returns the goroutine is gone (goleak in TestMain checks the rest).
func TestWatchStop(t *testing.T) {
	enc := newWireEncoder(rest.ContentTypeJSON)
	stream := concat(enc.frame(t, watch.Added, testPod("ns1", "a", "1")), enc.frame(t, watch.Added, testPod("ns1", "b", "2")))
	ts := testserver.New(t, serveThenHang(enc.contentType, stream))
	lw := newTestLW(t, ts, Options{}, nil)

	// More events than the channel and a batch decoded ahead hold
	// (watch_batch.go), so that the goroutine comes to block sending.
	pb := newWireEncoder(rest.ContentTypeProtobuf)
	var many [][]byte
	for i := range 2*aheadMax + 2 {
		many = append(many, pb.frame(t, watch.Added, testPod("ns1", fmt.Sprint("p", i), fmt.Sprint(i+1))))
	}
	tsMany := testserver.New(t, serveThenHang(pb.contentType, concat(many...)))

	t.Run("blocked on send", func(t *testing.T) {
		w, err := newTestLW(t, tsMany, Options{}, nil).Watch(context.Background(), metav1.ListOptions{})
		require.NoError(t, err)
		ev := <-w.ResultChan() // the goroutine has read the stream
		require.Equal(t, "p0", podName(t, ev.Object))
		w.Stop()
		w.Stop() // idempotent
		requireClosed(t, w.ResultChan())
		assert.NoError(t, w.(*Watcher).Err(), "Stop is not an error")
	})
	t.Run("blocked on read", func(t *testing.T) {
		w, err := lw.Watch(context.Background(), metav1.ListOptions{})
		require.NoError(t, err)
		for range 2 {
			ev := <-w.ResultChan()
			require.Equal(t, watch.Added, ev.Type)
		}
		w.Stop()
		requireClosed(t, w.ResultChan())
		assert.NoError(t, w.(*Watcher).Err())
	})
}

func TestWatchContextCancel(t *testing.T) {
	enc := newWireEncoder(rest.ContentTypeProtobuf)
	ts := testserver.New(t, serveThenHang(enc.contentType, enc.frame(t, watch.Added, testPod("ns1", "a", "1"))))
	lw := newTestLW(t, ts, Options{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	w, err := lw.Watch(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	defer w.Stop()
	ev := <-w.ResultChan()
	require.Equal(t, "a", podName(t, ev.Object))
	cancel()
	requireClosed(t, w.ResultChan())
	assert.ErrorIs(t, w.(*Watcher).Err(), context.Canceled)
}

// Connection failures keep the transport's error in the chain, so a
// reflector can tell "server down" (back off, then watch again) from an
// API error.
func TestConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())

	lw, err := New(newRESTClient(t, rest.Config{Host: "http://" + addr}), podsResource, Options{})
	require.NoError(t, err)
	_, listErr := lw.List(context.Background(), metav1.ListOptions{})
	_, watchErr := lw.Watch(context.Background(), metav1.ListOptions{})
	for _, err := range []error{listErr, watchErr} {
		require.Error(t, err)
		assert.True(t, errors.Is(err, syscall.ECONNREFUSED), "%v", err)
		var opErr *net.OpError
		assert.ErrorAs(t, err, &opErr)
	}
}

func TestListTimeout(t *testing.T) {
	release := make(chan struct{})
	ts := testserver.New(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	lw := newTestLW(t, ts, Options{}, func(c *rest.Config) { c.Timeout = 50 * time.Millisecond })
	_, err := lw.List(context.Background(), metav1.ListOptions{})
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

func requireClosed(t *testing.T, ch <-chan watch.Event) {
	t.Helper()
	select {
	case _, ok := <-ch:
		for ok { // drain what was in flight; the channel must then close
			_, ok = <-ch
		}
	case <-time.After(10 * time.Second):
		t.Fatal("result channel not closed")
	}
}
