package attack_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/seed31a95821/informer/fakeapi"
)

// Attacks on fakeapi by a hostile client. Each checks the answer is a
// clean Status (never a 500, which is what a recovered handler panic
// becomes), that the server still serves a healthy request afterwards,
// and that Close leaves no goroutine behind.

// startFakeapi starts a server; the returned function closes it and
// checks that no goroutine is left.
func startFakeapi(t *testing.T, opts fakeapi.Options) (*fakeapi.Server, func()) {
	ignore := goleak.IgnoreCurrent()
	srv, err := fakeapi.NewServer(opts)
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	return srv, func() {
		srv.Close()
		goleak.VerifyNone(t, ignore)
	}
}

// rawRequest sends head (request line and headers) and body on a fresh
// connection and returns the response's status code and how long it took.
func rawRequest(t *testing.T, srv *fakeapi.Server, head, body string) (int, time.Duration) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL(), "http://"))
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	start := time.Now()
	_, err = fmt.Fprintf(conn, "%s\r\nHost: x\r\n\r\n%s", head, body)
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "no answer")
	resp.Body.Close()
	return resp.StatusCode, time.Since(start)
}

// get sends a GET with an optional bearer token and returns code and body.
func get(t *testing.T, rawURL, bearer string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	require.NoError(t, err)
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(body)
}

// watchStatus opens a watch and returns its status code, closing it at once.
func watchStatus(t *testing.T, rawURL string) int {
	t.Helper()
	resp, err := http.Get(rawURL)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// stillServes checks that a healthy list still works.
func stillServes(t *testing.T, srv *fakeapi.Server, bearer string) {
	t.Helper()
	code, body := get(t, srv.URL()+"/api/v1/pods", bearer)
	require.Equal(t, http.StatusOK, code, body)
}

// Item 10, first half: a Content-Length above the body limit is refused
// before the body is read. The server used to wait for bytes that never
// came.
func TestAttackFakeapiOversizedBody(t *testing.T) {
	srv, done := startFakeapi(t, fakeapi.Options{BodyTimeout: time.Minute})
	code, took := rawRequest(t, srv,
		"POST /api/v1/namespaces/ns/pods HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 1073741824", "{")
	require.Equal(t, http.StatusRequestEntityTooLarge, code)
	require.Less(t, took, 5*time.Second)
	stillServes(t, srv, "")
	done()
}

// Item 10, second half: a body announced and trickled (or never sent)
// holds its handler for BodyTimeout, not for ever.
func TestAttackFakeapiSlowBody(t *testing.T) {
	srv, done := startFakeapi(t, fakeapi.Options{BodyTimeout: 300 * time.Millisecond})
	before := runtime.NumGoroutine()
	code, took := rawRequest(t, srv,
		"POST /api/v1/namespaces/ns/pods HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 1000", `{"metadata":{"na`)
	require.Equal(t, http.StatusBadRequest, code)
	require.Less(t, took, 5*time.Second)
	waitGoroutines(t, before, "the handler and its connection are released")
	stillServes(t, srv, "")
	done()
}

// Classes "bad selectors" and "bad continue tokens".
func TestAttackFakeapiBadSelectorsAndContinue(t *testing.T) {
	srv, done := startFakeapi(t, fakeapi.Options{})
	bad := []string{
		"labelSelector=" + url.QueryEscape("(((("),
		"labelSelector=" + url.QueryEscape("a in (b"),
		"labelSelector=" + url.QueryEscape(strings.Repeat("a=b,", 10000)),
		"fieldSelector=" + url.QueryEscape("metadata.name=a,,=="),
		"fieldSelector=" + url.QueryEscape("spec.nope=x"),
		"continue=garbage",
		"continue=" + url.QueryEscape("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTUsInN0YXJ0IjoieCJ9"),
		"continue=" + url.QueryEscape("\xff\xfe"),
		"limit=-1&continue=x",
		"resourceVersion=" + strings.Repeat("9", 100),
	}
	for _, q := range bad {
		code, body := get(t, srv.URL()+"/api/v1/pods?"+q, "")
		require.NotEqual(t, http.StatusInternalServerError, code, "%s: %s", q, body)
		require.True(t, code == http.StatusOK || (code >= 400 && code < 500), "%s: %d %s", q, code, body)
		code = watchStatus(t, srv.URL()+"/api/v1/pods?watch=true&"+q)
		require.NotEqual(t, http.StatusInternalServerError, code, "watch %s", q)
	}
	stillServes(t, srv, "")
	done()
}

// Class "unknown resources".
func TestAttackFakeapiUnknownResources(t *testing.T) {
	srv, done := startFakeapi(t, fakeapi.Options{})
	for _, p := range []string{
		"/api/v1/foos", "/api/v2/pods", "/apis/nope/v1/things", "/apis/apps/v9/deployments",
		"/api/v1/namespaces/ns/foos/x", "/apis/" + strings.Repeat("a/", 1000),
	} {
		code, body := get(t, srv.URL()+p, "")
		require.Equal(t, http.StatusNotFound, code, "%s: %s", p, body)
	}
	stillServes(t, srv, "")
	done()
}

// Class "missing or wrong tokens": 401, and the token sent is not echoed.
func TestAttackFakeapiTokens(t *testing.T) {
	srv, done := startFakeapi(t, fakeapi.Options{Token: token})
	for _, bearer := range []string{"", "wrong-" + token, strings.Repeat("x", 10000)} {
		code, body := get(t, srv.URL()+"/api/v1/pods", bearer)
		require.Equal(t, http.StatusUnauthorized, code)
		if bearer != "" {
			require.NotContains(t, body, bearer, "the server echoed the token it was sent")
		}
	}
	stillServes(t, srv, token)
	done()
}

// Class "thousands of abandoned watches": clients open watches and vanish
// without a word. Every watch's goroutine ends, and the server goes on
// serving.
func TestAttackFakeapiAbandonedWatches(t *testing.T) {
	srv, done := startFakeapi(t, fakeapi.Options{})
	before := runtime.NumGoroutine()
	const n = 2000
	conns := make([]net.Conn, 0, n)
	addr := strings.TrimPrefix(srv.URL(), "http://")
	for range n {
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		_, err = io.WriteString(conn, "GET /api/v1/pods?watch=true HTTP/1.1\r\nHost: x\r\n\r\n")
		require.NoError(t, err)
		conns = append(conns, conn)
	}
	require.Eventually(t, func() bool { return runtime.NumGoroutine() >= before+n }, waitFor, time.Millisecond,
		"the server holds the watches")
	t.Logf("%d watches open: %d goroutines", n, runtime.NumGoroutine())
	for _, c := range conns {
		c.Close() // abandoned: no read, no goodbye
	}
	waitGoroutines(t, before, "every abandoned watch's goroutine ends")
	stillServes(t, srv, "")
	done()
}

// waitGoroutines waits until at most n goroutines run. (Not with
// require.Eventually: it runs its condition on a goroutine of its own.)
func waitGoroutines(t *testing.T, n int, what string) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%s: %d goroutines, want at most %d:\n%s", what, runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
}
