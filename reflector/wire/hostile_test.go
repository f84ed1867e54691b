package wire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed31a95821/informer/internal/testserver"
	"github.com/seed31a95821/informer/rest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// The defences against a broken or hostile server (issue 16), one by one.
// The attack package drives them end to end through an informer.

// The server echoes the Authorization header everywhere it can: in an
// error body, a Status, a watch ERROR event and an unknown event type.
func TestTokenNeverInErrors(t *testing.T) {
	const token = "s3cr3t-token-abc"
	mode := atomic.Int32{}
	ts := testserver.New(t, func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		switch mode.Load() {
		case 0: // a plain-text error page quoting the header
			http.Error(w, "denied for "+auth, http.StatusForbidden)
		case 1: // a Status quoting it
			st := apierrors.NewUnauthorized("token " + auth + " rejected").ErrStatus
			w.Header().Set("Content-Type", rest.ContentTypeJSON)
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write(newWireEncoder(rest.ContentTypeJSON).object(t, &st))
		case 2: // a watch whose ERROR event quotes it, then a frame typed with it
			st := apierrors.NewInternalError(errors.New("saw " + auth)).ErrStatus
			enc := newWireEncoder(rest.ContentTypeJSON)
			serveStream(rest.ContentTypeJSON, concat(
				enc.frame(t, watch.Error, &st),
				enc.rawFrame(t, auth, []byte(`{}`)),
			), 0)(w, r)
		}
	})
	lw := newTestLW(t, ts, Options{}, func(c *rest.Config) { c.BearerToken = token })
	ctx := context.Background()

	_, err := lw.List(ctx, metav1.ListOptions{})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), token)
	assert.Contains(t, err.Error(), "[redacted]")
	assert.True(t, apierrors.IsForbidden(err), "still typed: %v", err)

	mode.Store(1)
	_, err = lw.Watch(ctx, metav1.ListOptions{})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), token)
	assert.True(t, apierrors.IsUnauthorized(err))

	mode.Store(2)
	w, err := lw.Watch(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	events := collect(t, w)
	require.NotEmpty(t, events)
	for _, ev := range events {
		assert.NotContains(t, fmt.Sprintf("%+v", ev.Object), token)
	}
	require.Error(t, w.(*Watcher).Err())
	assert.NotContains(t, w.(*Watcher).Err().Error(), token)
}

// A redirect is not followed, to another port or anywhere: the token stays
// home, and the error names where the server pointed.
func TestRedirectIsRefused(t *testing.T) {
	var leaked atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			leaked.Add(1)
		}
	}))
	defer elsewhere.Close()
	ts := testserver.New(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/api/v1/pods", http.StatusFound)
	})
	lw := newTestLW(t, ts, Options{}, func(c *rest.Config) { c.BearerToken = "tok-redirect" })
	for _, call := range []func() error{
		func() error { _, err := lw.List(context.Background(), metav1.ListOptions{}); return err },
		func() error { _, err := lw.Watch(context.Background(), metav1.ListOptions{}); return err },
	} {
		err := call()
		require.ErrorIs(t, err, rest.ErrRedirect)
		var re *rest.RedirectError
		require.ErrorAs(t, err, &re)
		assert.Equal(t, http.StatusFound, re.Code)
		assert.Equal(t, elsewhere.URL+"/api/v1/pods", re.Location)
		var status apierrors.APIStatus
		require.ErrorAs(t, err, &status)
		assert.Equal(t, int32(http.StatusFound), status.Status().Code)
	}
	assert.Zero(t, leaked.Load(), "the token went to the redirect's target")

	// Also through a caller's client that would follow redirects.
	lw2, err := New(newRESTClient(t, rest.Config{Host: ts.URL, BearerToken: "tok", HTTPClient: &http.Client{}}), podsResource, Options{})
	require.NoError(t, err)
	defer lw2.CloseIdleConnections()
	_, err = lw2.List(context.Background(), metav1.ListOptions{})
	require.ErrorIs(t, err, rest.ErrRedirect)
	assert.Zero(t, leaked.Load())
}

// A server that accepts the connection and never sends headers gets
// ResponseHeaderTimeout, for watches and lists alike.
func TestResponseHeaderTimeout(t *testing.T) {
	release := make(chan struct{})
	ts := testserver.New(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	lw := newTestLW(t, ts, Options{}, func(c *rest.Config) { c.ResponseHeaderTimeout = 100 * time.Millisecond })
	start := time.Now()
	_, err := lw.Watch(context.Background(), metav1.ListOptions{})
	require.ErrorIs(t, err, rest.ErrResponseHeaderTimeout)
	var netErr net.Error
	assert.ErrorAs(t, err, &netErr, "a network-class failure")
	_, err = lw.List(context.Background(), metav1.ListOptions{})
	require.ErrorIs(t, err, rest.ErrResponseHeaderTimeout)
	assert.Less(t, time.Since(start), 10*time.Second)
	assert.Equal(t, rest.DefaultResponseHeaderTimeout, rest.Config{}.WithDefaults().ResponseHeaderTimeout)
}

// One limiter, shared through rest.Config.RateLimiter by every ListerWatcher
// built from copies of the rest.Config.
func TestRateLimiterShared(t *testing.T) {
	body := newWireEncoder(rest.ContentTypeJSON).object(t, testPodList("1", "", 0))
	ts := testserver.New(t, testserver.ServeBody(rest.ContentTypeJSON, http.StatusOK, body))
	cfg := rest.Config{Host: ts.URL, QPS: 1, Burst: 2}
	cfg.RateLimiter = rest.NewRateLimiter(cfg)
	copied := cfg // a copy shares the pointer
	a, err := New(newRESTClient(t, cfg), podsResource, Options{})
	require.NoError(t, err)
	defer a.CloseIdleConnections()
	b, err := New(newRESTClient(t, copied), podsResource, Options{})
	require.NoError(t, err)
	defer b.CloseIdleConnections()
	assert.Same(t, a.rc.RateLimiter(), b.rc.RateLimiter())

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, errA := a.List(ctx, metav1.ListOptions{})
	_, errB := b.List(ctx, metav1.ListOptions{})
	require.NoError(t, errA)
	require.NoError(t, errB)
	_, err = a.List(ctx, metav1.ListOptions{})
	require.Error(t, err, "the burst of 2 is spent by both together; the next token is a second away")

	def := rest.Config{}.WithDefaults()
	assert.Equal(t, float32(rest.DefaultQPS), def.QPS)
	assert.Equal(t, rest.DefaultBurst, def.Burst)
	assert.Nil(t, rest.NewRateLimiter(rest.Config{QPS: -1}), "negative QPS: no limit")
}

// CloseIdleConnections leaves no transport goroutine behind, even while
// the server keeps its side of the connection open.
func TestCloseIdleConnections(t *testing.T) {
	body := newWireEncoder(rest.ContentTypeJSON).object(t, testPodList("1", "", 1))
	ts := testserver.New(t, testserver.ServeBody(rest.ContentTypeJSON, http.StatusOK, body))
	ignore := goleak.IgnoreCurrent()
	lw, err := New(newRESTClient(t, rest.Config{Host: ts.URL}), podsResource, Options{})
	require.NoError(t, err)
	_, err = lw.List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	lw.CloseIdleConnections()
	goleak.VerifyNone(t, ignore,
		goleak.IgnoreAnyFunction("net/http.(*conn).serve"),
		goleak.IgnoreAnyFunction("net/http.(*Server).Serve"))
}
