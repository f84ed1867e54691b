package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// The defences against a broken or hostile server (issue 16), one by one.
// The attack package drives them end to end through an informer.

func TestBodyRoom(t *testing.T) {
	const noLimit = 1 << 40
	tests := []struct {
		name           string
		have           int
		claimed, limit int64
		want           int
	}{
		{"unknown length: a small first buffer", 0, -1, noLimit, firstUnknownBuffer},
		{"unknown length: doubles", 1 << 20, -1, noLimit, 1 << 20},
		{"small claim: exactly the claim and the end", 0, 100, noLimit, 101},
		{"huge claim: only trustedClaim before any byte arrives", 0, 1 << 30, noLimit, trustedClaim},
		{"huge claim: doubles as bytes arrive", 4 << 20, 1 << 30, noLimit, 4 << 20},
		{"near the claim: never past it", 900 << 20, 1 << 30, noLimit, 124<<20 + 1},
		{"claim reached: room for the end only", 100, 100, noLimit, 1},
		{"claim exceeded: keeps growing, the limit stops it", 1000, 100, noLimit, firstUnknownBuffer},
		{"unknown length near the limit: never past it", 40 << 20, -1, 64<<20 + 5, 24<<20 + 6},
		{"unknown length, doubling reaches the limit: to limit+1 at once", 32 << 20, -1, 64 << 20, 32<<20 + 1},
		{"limit below the first buffer", 0, -1, 10, 11},
		{"limit below the trusted claim", 0, 1 << 30, 1000, 1001},
		{"claim exceeded near the limit", 1000, 100, 1500, 501},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, bodyRoom(tt.have, tt.claimed, tt.limit))
		})
	}
}

// A body of unknown length (chunked, or gzip-inflated by net/http) is read
// into a buffer that never grows past the limit and the one byte that
// shows the end: a body of exactly the limit fits, one byte more is
// refused, and refusing allocates less than three times the limit (the
// doublings on the way, then the last buffer). The buffer used to double
// past the limit: up to twice the limit in one buffer, four times in all.
func TestReadBodyBufferNeverPassesTheLimit(t *testing.T) {
	for _, limit := range []int64{100_000, 1 << 20, 3<<20 + 7} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			body := strings.Repeat("x", int(limit))
			got, err := ReadBody(&http.Response{ContentLength: -1, Body: io.NopCloser(strings.NewReader(body))}, limit)
			require.NoError(t, err)
			assert.Len(t, got, int(limit))
			assert.LessOrEqual(t, int64(cap(got)), limit+1, "the buffer grew past the limit")

			tooLong := &http.Response{ContentLength: -1, Body: io.NopCloser(strings.NewReader(body + "y"))}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = ReadBody(tooLong, limit)
			runtime.ReadMemStats(&after)
			require.ErrorIs(t, err, ErrObjectTooLarge)
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(3*limit), "allocated to refuse a body one byte too long")
		})
	}
}

// A 19-byte body that claims a gigabyte costs what it sends, not what it
// claims.
func TestLyingContentLengthIsNotAllocated(t *testing.T) {
	body := `{"kind":"PodList"}`
	var got []byte
	var err error
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err = ReadBody(&http.Response{ContentLength: 1 << 30, Body: io.NopCloser(strings.NewReader(body))}, 2<<30)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	assert.Equal(t, body, string(got))
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(2*trustedClaim), "allocated for the claim")
}

func TestRedactor(t *testing.T) {
	auth, err := newAuthenticator(Config{Host: "https://example.test", BearerToken: "s3cr3t-token"})
	require.NoError(t, err)
	red := redactor{auth: auth}
	assert.Equal(t, "bad token [redacted] twice [redacted]", red.redact("bad token s3cr3t-token twice s3cr3t-token"))
	assert.Equal(t, "nothing here", red.redact("nothing here"))

	cause := errors.New("echo s3cr3t-token")
	e := red.err(fmt.Errorf("wrapped: %w", cause))
	assert.Equal(t, "wrapped: echo [redacted]", e.Error())
	assert.ErrorIs(t, e, cause, "still unwraps")
	plain := errors.New("fine")
	assert.Same(t, plain, red.err(plain))

	st := &metav1.Status{Message: "s3cr3t-token", Details: &metav1.StatusDetails{
		Name: "s3cr3t-token", Causes: []metav1.StatusCause{{Message: "x s3cr3t-token", Field: "s3cr3t-token"}}}}
	red.status(st)
	assert.NotContains(t, fmt.Sprintf("%+v", st), "s3cr3t-token")
	assert.Equal(t, "s3cr3t-token", auth.tokens.static, "the token itself is untouched")
	assert.Equal(t, "x", redactor{}.redact("x"), "the zero value redacts nothing")
}

// The server echoes the Authorization header everywhere it can: in an
// error body, a Status, a watch ERROR event and an unknown event type.
func TestTokenNeverInErrors(t *testing.T) {
	const token = "s3cr3t-token-abc"
	mode := atomic.Int32{}
	ts := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		switch mode.Load() {
		case 0: // a plain-text error page quoting the header
			http.Error(w, "denied for "+auth, http.StatusForbidden)
		case 1: // a Status quoting it
			st := apierrors.NewUnauthorized("token " + auth + " rejected").ErrStatus
			w.Header().Set("Content-Type", ContentTypeJSON)
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write(newWireEncoder(ContentTypeJSON).object(t, &st))
		case 2: // a watch whose ERROR event quotes it, then a frame typed with it
			st := apierrors.NewInternalError(errors.New("saw " + auth)).ErrStatus
			enc := newWireEncoder(ContentTypeJSON)
			serveStream(ContentTypeJSON, concat(
				enc.frame(t, watch.Error, &st),
				enc.rawFrame(t, auth, []byte(`{}`)),
			), 0)(w, r)
		}
	})
	lw := newTestLW(t, ts, Options{}, func(c *Config) { c.BearerToken = token })
	ctx := context.Background()

	_, err := lw.List(ctx, metav1.ListOptions{})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), token)
	assert.Contains(t, err.Error(), redactedToken)
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
	ts := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/api/v1/pods", http.StatusFound)
	})
	lw := newTestLW(t, ts, Options{}, func(c *Config) { c.BearerToken = "tok-redirect" })
	for _, call := range []func() error{
		func() error { _, err := lw.List(context.Background(), metav1.ListOptions{}); return err },
		func() error { _, err := lw.Watch(context.Background(), metav1.ListOptions{}); return err },
	} {
		err := call()
		require.ErrorIs(t, err, ErrRedirect)
		var re *RedirectError
		require.ErrorAs(t, err, &re)
		assert.Equal(t, http.StatusFound, re.Code)
		assert.Equal(t, elsewhere.URL+"/api/v1/pods", re.Location)
		var status apierrors.APIStatus
		require.ErrorAs(t, err, &status)
		assert.Equal(t, int32(http.StatusFound), status.Status().Code)
	}
	assert.Zero(t, leaked.Load(), "the token went to the redirect's target")

	// Also through a caller's client that would follow redirects.
	lw2, err := New(Config{Host: ts.URL, BearerToken: "tok"}, podsGVR, Options{HTTPClient: &http.Client{}})
	require.NoError(t, err)
	defer lw2.CloseIdleConnections()
	_, err = lw2.List(context.Background(), metav1.ListOptions{})
	require.ErrorIs(t, err, ErrRedirect)
	assert.Zero(t, leaked.Load())
}

// A server that accepts the connection and never sends headers gets
// ResponseHeaderTimeout, for watches and lists alike.
func TestResponseHeaderTimeout(t *testing.T) {
	release := make(chan struct{})
	ts := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	lw := newTestLW(t, ts, Options{}, func(c *Config) { c.ResponseHeaderTimeout = 100 * time.Millisecond })
	start := time.Now()
	_, err := lw.Watch(context.Background(), metav1.ListOptions{})
	require.ErrorIs(t, err, ErrResponseHeaderTimeout)
	var netErr net.Error
	assert.ErrorAs(t, err, &netErr, "a network-class failure")
	_, err = lw.List(context.Background(), metav1.ListOptions{})
	require.ErrorIs(t, err, ErrResponseHeaderTimeout)
	assert.Less(t, time.Since(start), 10*time.Second)
	assert.Equal(t, DefaultResponseHeaderTimeout, Config{}.WithDefaults().ResponseHeaderTimeout)
}

// One limiter, shared through Config.RateLimiter by every ListerWatcher
// built from copies of the Config.
func TestRateLimiterShared(t *testing.T) {
	body := newWireEncoder(ContentTypeJSON).object(t, testPodList("1", "", 0))
	ts := newTestServer(t, serveBody(ContentTypeJSON, http.StatusOK, body))
	cfg := Config{Host: ts.URL, QPS: 1, Burst: 2}
	cfg.RateLimiter = NewRateLimiter(cfg)
	copied := cfg // a copy shares the pointer
	a, err := New(cfg, podsGVR, Options{})
	require.NoError(t, err)
	defer a.CloseIdleConnections()
	b, err := New(copied, podsGVR, Options{})
	require.NoError(t, err)
	defer b.CloseIdleConnections()
	assert.Same(t, a.limiter, b.limiter)

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, errA := a.List(ctx, metav1.ListOptions{})
	_, errB := b.List(ctx, metav1.ListOptions{})
	require.NoError(t, errA)
	require.NoError(t, errB)
	_, err = a.List(ctx, metav1.ListOptions{})
	require.Error(t, err, "the burst of 2 is spent by both together; the next token is a second away")

	def := Config{}.WithDefaults()
	assert.Equal(t, float32(DefaultQPS), def.QPS)
	assert.Equal(t, DefaultBurst, def.Burst)
	assert.Nil(t, NewRateLimiter(Config{QPS: -1}), "negative QPS: no limit")
}

// CloseIdleConnections leaves no transport goroutine behind, even while
// the server keeps its side of the connection open.
func TestCloseIdleConnections(t *testing.T) {
	body := newWireEncoder(ContentTypeJSON).object(t, testPodList("1", "", 1))
	ts := newTestServer(t, serveBody(ContentTypeJSON, http.StatusOK, body))
	ignore := goleak.IgnoreCurrent()
	lw, err := New(Config{Host: ts.URL}, podsGVR, Options{})
	require.NoError(t, err)
	_, err = lw.List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	lw.CloseIdleConnections()
	goleak.VerifyNone(t, ignore,
		goleak.IgnoreAnyFunction("net/http.(*conn).serve"),
		goleak.IgnoreAnyFunction("net/http.(*Server).Serve"))
}

// A token that came from an exec plugin is redacted like a configured one:
// the server below quotes the Authorization header in its 403 page.
func TestExecTokenNeverInErrors(t *testing.T) {
	ts := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "denied for "+r.Header.Get("Authorization"), http.StatusForbidden)
	})
	plugin := newFakeExec(t, "token") // issues tok-1
	lw := newTestLW(t, ts, Options{}, func(c *Config) { *c = Config{Host: ts.URL, Exec: plugin.ExecConfig} })
	_, err := lw.List(context.Background(), metav1.ListOptions{})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "tok-1")
	assert.Contains(t, err.Error(), redactedToken, "the echo is there, redacted")
	assert.Equal(t, 1, plugin.runs(t))

	// client/'s errors go through ErrorFromResponse with the same Config.
	resp := &http.Response{StatusCode: http.StatusForbidden, Header: http.Header{},
		Body: io.NopCloser(strings.NewReader("no, tok-1"))}
	err = ErrorFromResponse(Config{Host: ts.URL, Exec: plugin.ExecConfig}, resp, "get", schema.GroupResource{Resource: "pods"})
	assert.NotContains(t, err.Error(), "tok-1")
}
