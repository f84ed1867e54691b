package rest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed31a95821/informer/internal/testserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Where credentials could still leak once a token file, an exec plugin and
// the user's own requests all meet: each server below quotes the
// Authorization header it was sent.

func echoAuthorization(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(code)
		io.WriteString(w, "refused "+r.Header.Get("Authorization"))
	}
}

// Client.Error redacts the token the request carried, even when the
// token file has rotated since (the client still sends its cached token)
// or has gone altogether.
func TestErrorRedactsTheTokenSent(t *testing.T) {
	for _, after := range []string{"rotated", "removed"} {
		t.Run(after, func(t *testing.T) {
			srv := httptest.NewServer(echoAuthorization(http.StatusInternalServerError))
			defer srv.Close()
			file := filepath.Join(t.TempDir(), "token")
			require.NoError(t, os.WriteFile(file, []byte("token-one-AAAA"), 0o600))
			cfg := Config{Host: srv.URL, BearerTokenFile: file}
			c, err := NewAuthenticatedClient(cfg)
			require.NoError(t, err)
			defer c.CloseIdleConnections()
			rc, err := New(cfg)
			require.NoError(t, err)
			if after == "rotated" {
				require.NoError(t, os.WriteFile(file, []byte("token-two-BBBB"), 0o600))
			}
			resp, err := c.Get(srv.URL + "/api/v1/pods")
			require.NoError(t, err)
			defer resp.Body.Close()
			if after == "removed" {
				require.NoError(t, os.Remove(file))
			}
			err = rc.Error(resp, "get", schema.GroupResource{Resource: "pods"})
			assert.NotContains(t, err.Error(), "token-one")
			assert.Contains(t, err.Error(), redactedToken)
		})
	}
}

// After a 401 drops the plugin's cached credential, the plugin runs again;
// when it fails naming the token just refused, that token is redacted from
// its stderr at the source, so neither the error text nor an *ExecError
// reached with errors.As shows it, through the authenticated client or a
// ListerWatcher.
func TestExecStderrRedactedAfterA401(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "plugin.sh")
	require.NoError(t, os.WriteFile(script, []byte(`#!/bin/sh
if [ -e `+dir+`/ran ]; then echo "refresh failed: token old-token-XYZW revoked" >&2; exit 1; fi
touch `+dir+`/ran
echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"old-token-XYZW"}}'
`), 0o755))
	srv := httptest.NewServer(echoAuthorization(http.StatusUnauthorized))
	defer srv.Close()
	cfg := Config{Host: srv.URL, Exec: &ExecConfig{APIVersion: ExecAPIVersionV1, Command: script}}
	c, err := NewAuthenticatedClient(cfg)
	require.NoError(t, err)
	defer c.CloseIdleConnections()
	_, err = c.Get(srv.URL + "/api/v1/pods")
	require.Error(t, err)
	assertNoToken(t, err, "old-token")

	lw, err := newLister(cfg)
	require.NoError(t, err)
	defer lw.CloseIdleConnections()
	_, err = lw.List(t.Context(), metav1.ListOptions{})
	require.Error(t, err)
	assertNoToken(t, err, "old-token")
}

func assertNoToken(t *testing.T, err error, token string) {
	t.Helper()
	assert.NotContains(t, err.Error(), token)
	var execErr *ExecError
	if errors.As(err, &execErr) {
		assert.NotContains(t, execErr.Stderr, token, "the plugin's stderr as the error carries it")
	}
}

// The authenticated client's CloseIdleConnections reaches the transport
// under it: no connection goroutine is left.
func TestAuthenticatedClientClosesIdleConnections(t *testing.T) {
	before := goleak.IgnoreCurrent() // before the request: its connection's goroutines must go
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	c, err := NewAuthenticatedClient(Config{Host: srv.URL, BearerToken: "tok-1234"})
	require.NoError(t, err)
	resp, err := c.Get(srv.URL + "/x")
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	c.CloseIdleConnections()
	goleak.VerifyNone(t, before,
		goleak.IgnoreAnyFunction("net/http.(*conn).serve"),
		goleak.IgnoreAnyFunction("net/http/httptest.(*Server).goServe"),
		goleak.IgnoreAnyFunction("net/http.(*Server).Serve"))
}

// A token that came from an exec plugin is redacted like a configured one:
// the server below quotes the Authorization header in its 403 page.
func TestExecTokenNeverInErrors(t *testing.T) {
	ts := testserver.New(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "denied for "+r.Header.Get("Authorization"), http.StatusForbidden)
	})
	plugin := newFakeExec(t, "token") // issues tok-1
	lw := newTestLW(t, ts, func(c *Config) { *c = Config{Host: ts.URL, Exec: plugin.ExecConfig} })
	_, err := lw.List(context.Background(), metav1.ListOptions{})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "tok-1")
	assert.Contains(t, err.Error(), "[redacted]", "the echo is there, redacted")
	assert.Equal(t, 1, plugin.runs(t))

	// client/'s errors go through the same Client.Error.
	resp := &http.Response{StatusCode: http.StatusForbidden, Header: http.Header{},
		Body: io.NopCloser(strings.NewReader("no, tok-1"))}
	err = lw.Error(resp, "get", schema.GroupResource{Resource: "pods"})
	assert.NotContains(t, err.Error(), "tok-1")
}
