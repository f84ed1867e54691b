package rest

import (
	"context"
	"crypto/tls"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/seed31a95821/informer/internal/testserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func listOnce(t *testing.T, cfg Config) error {
	t.Helper()
	lw, err := newLister(cfg)
	require.NoError(t, err)
	defer lw.CloseIdleConnections()
	_, err = lw.List(context.Background(), metav1.ListOptions{})
	return err
}

func TestTLS(t *testing.T) {
	pki := testserver.NewPKI(t)
	other := testserver.NewPKI(t)
	dir := t.TempDir()
	pki.WriteFiles(t, dir)
	mtls, clientCN := testserver.NewTLS(t, pki, tls.RequireAndVerifyClientCert)
	plain, _ := testserver.NewTLS(t, pki, tls.NoClientCert)

	t.Run("CA and client certificate as data", func(t *testing.T) {
		require.NoError(t, listOnce(t, Config{Host: mtls.URL, CAData: pki.CAPEM, CertData: pki.ClientCert, KeyData: pki.ClientKey}))
		assert.Equal(t, "alice", clientCN())
	})
	t.Run("CA and client certificate as files", func(t *testing.T) {
		require.NoError(t, listOnce(t, Config{Host: mtls.URL, CAFile: filepath.Join(dir, "ca.crt"),
			CertFile: filepath.Join(dir, "client.crt"), KeyFile: filepath.Join(dir, "client.key")}))
	})
	t.Run("certificate as data, key as a file, as kubectl allows", func(t *testing.T) {
		require.NoError(t, listOnce(t, Config{Host: mtls.URL, CAData: pki.CAPEM,
			CertData: pki.ClientCert, KeyFile: filepath.Join(dir, "client.key")}))
	})
	t.Run("certificate as a file, key as data", func(t *testing.T) {
		require.NoError(t, listOnce(t, Config{Host: mtls.URL, CAData: pki.CAPEM,
			CertFile: filepath.Join(dir, "client.crt"), KeyData: pki.ClientKey}))
	})
	t.Run("verification is on by default", func(t *testing.T) {
		err := listOnce(t, Config{Host: plain.URL})
		var verr *tls.CertificateVerificationError
		assert.ErrorAs(t, err, &verr)
	})
	t.Run("a CA that did not sign the server is refused", func(t *testing.T) {
		err := listOnce(t, Config{Host: plain.URL, CAData: other.CAPEM})
		var verr *tls.CertificateVerificationError
		assert.ErrorAs(t, err, &verr)
	})
	t.Run("missing client certificate is refused by the server", func(t *testing.T) {
		assert.Error(t, listOnce(t, Config{Host: mtls.URL, CAData: pki.CAPEM}))
	})
	t.Run("Insecure skips verification", func(t *testing.T) {
		assert.NoError(t, listOnce(t, Config{Host: plain.URL, Insecure: true}))
	})
	t.Run("unreadable material fails at construction", func(t *testing.T) {
		_, err := newLister(Config{Host: mtls.URL, CAFile: filepath.Join(dir, "missing.crt")})
		assert.ErrorIs(t, err, os.ErrNotExist)
		_, err = newLister(Config{Host: mtls.URL, CAData: []byte("not pem")})
		assert.ErrorIs(t, err, ErrInvalidConfig)
		_, err = newLister(Config{Host: mtls.URL, CertData: pki.ClientCert, KeyData: other.ClientKey})
		assert.ErrorIs(t, err, ErrInvalidConfig, "certificate and key do not match")
	})
}

// A shared client built once serves several ListerWatchers.
func TestSharedHTTPClient(t *testing.T) {
	pki := testserver.NewPKI(t)
	srv, _ := testserver.NewTLS(t, pki, tls.NoClientCert)
	cfg := Config{Host: srv.URL, CAData: pki.CAPEM}
	client, err := NewHTTPClient(cfg)
	require.NoError(t, err)
	defer client.CloseIdleConnections()
	for range 2 {
		cfg.HTTPClient = client
		lw, err := newLister(cfg)
		require.NoError(t, err)
		assert.Same(t, client.Transport, lw.http.Transport.(*authRoundTripper).base, "the same connection pool")
		_, err = lw.List(context.Background(), metav1.ListOptions{})
		require.NoError(t, err)
	}
}

// tokenServer accepts exactly one token at a time and answers 401 to
// anything else.
func tokenServer(t *testing.T, valid *string, mu *sync.Mutex) *testserver.Recorder {
	body := testserver.PodListJSON(t)
	return testserver.New(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ok := r.Header.Get("Authorization") == "Bearer "+*valid
		mu.Unlock()
		if !ok {
			testserver.ServeBody("", http.StatusUnauthorized, nil)(w, r)
			return
		}
		testserver.ServeBody(ContentTypeJSON, http.StatusOK, body)(w, r)
	})
}

func TestBearerToken(t *testing.T) {
	var mu sync.Mutex
	valid := "s3cret"
	ts := tokenServer(t, &valid, &mu)
	lw := newTestLW(t, ts, func(c *Config) { c.BearerToken = "s3cret" })
	_, err := lw.List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)

	wrong := newTestLW(t, ts, func(c *Config) { c.BearerToken = "guess" })
	_, err = wrong.List(context.Background(), metav1.ListOptions{})
	assert.True(t, apierrors.IsUnauthorized(err), "%v", err)
}

// A rotated token file is picked up after the server rejects the old
// token: the 401 invalidates the cached token, the next request re-reads.
func TestBearerTokenFileRotation(t *testing.T) {
	var mu sync.Mutex
	valid := "token-1"
	ts := tokenServer(t, &valid, &mu)
	file := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(file, []byte("token-1\n"), 0o600))
	lw := newTestLW(t, ts, func(c *Config) { c.BearerTokenFile = file })

	_, err := lw.List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err, "the file is read at construction; the trailing newline is trimmed")

	require.NoError(t, os.WriteFile(file, []byte("token-2"), 0o600))
	mu.Lock()
	valid = "token-2"
	mu.Unlock()
	_, err = lw.List(context.Background(), metav1.ListOptions{})
	assert.True(t, apierrors.IsUnauthorized(err), "the cached token is still sent: %v", err)
	_, err = lw.List(context.Background(), metav1.ListOptions{})
	assert.NoError(t, err, "after the 401 the file was re-read")

	_, err = newLister(Config{Host: ts.URL, BearerTokenFile: filepath.Join(t.TempDir(), "absent")})
	assert.ErrorIs(t, err, os.ErrNotExist, "a missing token file fails at construction")
}

func TestTokenSourceRereadsPeriodically(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(file, []byte("a"), 0o600))
	ts, err := newTokenSource("", file)
	require.NoError(t, err)
	now := time.Unix(1000, 0)
	ts.now = func() time.Time { return now }
	ts.readAt = now

	require.NoError(t, os.WriteFile(file, []byte("b"), 0o600))
	assert.Equal(t, "a", ts.Token(), "cached within the period")
	now = now.Add(tokenRefreshPeriod)
	assert.Equal(t, "b", ts.Token(), "re-read once the period has passed")

	require.NoError(t, os.Remove(file))
	now = now.Add(tokenRefreshPeriod)
	assert.Equal(t, "b", ts.Token(), "a failed re-read keeps the last good token")
}
