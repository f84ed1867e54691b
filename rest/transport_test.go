package rest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// testPKI is a throw-away CA with a server certificate for 127.0.0.1 and
// a client certificate, all PEM-encoded.
type testPKI struct {
	caPEM                 []byte
	serverCert            tls.Certificate
	clientCert, clientKey []byte
	caPool                *x509.CertPool
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)

	issue := func(serial int64, cn string, usage x509.ExtKeyUsage, ips []net.IP) (certPEM, keyPEM []byte) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: ips,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		require.NoError(t, err)
		keyDER, err := x509.MarshalECPrivateKey(key)
		require.NoError(t, err)
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	}
	p := &testPKI{caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), caPool: x509.NewCertPool()}
	p.caPool.AddCert(ca)
	srvCert, srvKey := issue(2, "apiserver", x509.ExtKeyUsageServerAuth, []net.IP{net.ParseIP("127.0.0.1")})
	p.serverCert, err = tls.X509KeyPair(srvCert, srvKey)
	require.NoError(t, err)
	p.clientCert, p.clientKey = issue(3, "alice", x509.ExtKeyUsageClientAuth, nil)
	return p
}

// writeFiles writes the PKI to dir as ca.crt, client.crt, client.key.
func (p *testPKI) writeFiles(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for name, data := range map[string][]byte{"ca.crt": p.caPEM, "client.crt": p.clientCert, "client.key": p.clientKey} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o600))
	}
}

// newTLSTestServer serves a pod list over TLS with p's server certificate
// and, when requireClient is set, insists on a client certificate from p's
// CA. It records the client certificate's CN.
func newTLSTestServer(t *testing.T, p *testPKI, requireClient bool) (*httptest.Server, func() string) {
	t.Helper()
	body := podListJSON(t)
	var mu sync.Mutex // guards cn
	var cn string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) > 0 {
			mu.Lock()
			cn = r.TLS.PeerCertificates[0].Subject.CommonName
			mu.Unlock()
		}
		serveBody(ContentTypeJSON, http.StatusOK, body)(w, r)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are expected here
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{p.serverCert}, MinVersion: tls.VersionTLS12}
	if requireClient {
		srv.TLS.ClientAuth, srv.TLS.ClientCAs = tls.RequireAndVerifyClientCert, p.caPool
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, func() string { mu.Lock(); defer mu.Unlock(); return cn }
}

func listOnce(t *testing.T, cfg Config) error {
	t.Helper()
	lw, err := newLister(cfg)
	require.NoError(t, err)
	defer lw.CloseIdleConnections()
	_, err = lw.List(context.Background(), metav1.ListOptions{})
	return err
}

func TestTLS(t *testing.T) {
	pki := newTestPKI(t)
	other := newTestPKI(t)
	dir := t.TempDir()
	pki.writeFiles(t, dir)
	mtls, clientCN := newTLSTestServer(t, pki, true)
	plain, _ := newTLSTestServer(t, pki, false)

	t.Run("CA and client certificate as data", func(t *testing.T) {
		require.NoError(t, listOnce(t, Config{Host: mtls.URL, CAData: pki.caPEM, CertData: pki.clientCert, KeyData: pki.clientKey}))
		assert.Equal(t, "alice", clientCN())
	})
	t.Run("CA and client certificate as files", func(t *testing.T) {
		require.NoError(t, listOnce(t, Config{Host: mtls.URL, CAFile: filepath.Join(dir, "ca.crt"),
			CertFile: filepath.Join(dir, "client.crt"), KeyFile: filepath.Join(dir, "client.key")}))
	})
	t.Run("certificate as data, key as a file, as kubectl allows", func(t *testing.T) {
		require.NoError(t, listOnce(t, Config{Host: mtls.URL, CAData: pki.caPEM,
			CertData: pki.clientCert, KeyFile: filepath.Join(dir, "client.key")}))
	})
	t.Run("certificate as a file, key as data", func(t *testing.T) {
		require.NoError(t, listOnce(t, Config{Host: mtls.URL, CAData: pki.caPEM,
			CertFile: filepath.Join(dir, "client.crt"), KeyData: pki.clientKey}))
	})
	t.Run("verification is on by default", func(t *testing.T) {
		err := listOnce(t, Config{Host: plain.URL})
		var verr *tls.CertificateVerificationError
		assert.ErrorAs(t, err, &verr)
	})
	t.Run("a CA that did not sign the server is refused", func(t *testing.T) {
		err := listOnce(t, Config{Host: plain.URL, CAData: other.caPEM})
		var verr *tls.CertificateVerificationError
		assert.ErrorAs(t, err, &verr)
	})
	t.Run("missing client certificate is refused by the server", func(t *testing.T) {
		assert.Error(t, listOnce(t, Config{Host: mtls.URL, CAData: pki.caPEM}))
	})
	t.Run("Insecure skips verification", func(t *testing.T) {
		assert.NoError(t, listOnce(t, Config{Host: plain.URL, Insecure: true}))
	})
	t.Run("unreadable material fails at construction", func(t *testing.T) {
		_, err := newLister(Config{Host: mtls.URL, CAFile: filepath.Join(dir, "missing.crt")})
		assert.ErrorIs(t, err, os.ErrNotExist)
		_, err = newLister(Config{Host: mtls.URL, CAData: []byte("not pem")})
		assert.ErrorIs(t, err, ErrInvalidConfig)
		_, err = newLister(Config{Host: mtls.URL, CertData: pki.clientCert, KeyData: other.clientKey})
		assert.ErrorIs(t, err, ErrInvalidConfig, "certificate and key do not match")
	})
}

// A shared client built once serves several ListerWatchers.
func TestSharedHTTPClient(t *testing.T) {
	pki := newTestPKI(t)
	srv, _ := newTLSTestServer(t, pki, false)
	cfg := Config{Host: srv.URL, CAData: pki.caPEM}
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
func tokenServer(t *testing.T, valid *string, mu *sync.Mutex) *testServer {
	body := podListJSON(t)
	return newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ok := r.Header.Get("Authorization") == "Bearer "+*valid
		mu.Unlock()
		if !ok {
			serveBody("", http.StatusUnauthorized, nil)(w, r)
			return
		}
		serveBody(ContentTypeJSON, http.StatusOK, body)(w, r)
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
