package fakeapi

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// rawRequest writes head (request line and headers, without the blank line)
// and then body on a fresh connection, and returns the status code of the
// response and how long it took. The body may be shorter than announced:
// the server must not wait for the rest forever.
func rawRequest(t *testing.T, srv *Server, head, body string) (int, time.Duration) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL(), "http://"))
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	start := time.Now()
	_, err = fmt.Fprintf(conn, "%s\r\nHost: x\r\n\r\n%s", head, body)
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode, time.Since(start)
}

// A Content-Length over the limit is refused before a byte of the body is
// read: the client that announced it and sends nothing gets its 413 at once.
func TestOversizedContentLengthRefusedUpFront(t *testing.T) {
	srv := startServer(t, Options{MaxBodyBytes: 1024, BodyTimeout: time.Minute})
	code, took := rawRequest(t, srv,
		"POST /api/v1/namespaces/ns/pods HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 1073741824", "")
	require.Equal(t, http.StatusRequestEntityTooLarge, code)
	require.Less(t, took, 5*time.Second, "answered without waiting for the body")
}

// A body announced and never sent holds its handler for BodyTimeout, not
// forever.
func TestSlowBodyTimesOut(t *testing.T) {
	srv := startServer(t, Options{BodyTimeout: 200 * time.Millisecond})
	code, took := rawRequest(t, srv,
		"POST /api/v1/namespaces/ns/pods HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 100", `{"metadata":`)
	require.Equal(t, http.StatusBadRequest, code)
	require.GreaterOrEqual(t, took, 200*time.Millisecond)
	require.Less(t, took, 5*time.Second)
}

// The deadline is the body's: a watch, which has none, streams past it.
func TestBodyTimeoutSparesWatches(t *testing.T) {
	srv := startServer(t, Options{BodyTimeout: 50 * time.Millisecond})
	w := openWatch(t, podsURL(srv)+"?watch=true", "")
	time.Sleep(150 * time.Millisecond) // past the body deadline: nothing must end
	seedNamed(t, srv, "ns", "a")
	require.Equal(t, "ADDED a 1", eventSummary(nextEvent(t, w)))
}
