package kubeconfig

// Test helpers shared with package rest's tests (copied: test files cannot
// be imported): a test PKI, a TLS server, a recording server.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/reflector/wire"
	"github.com/seed31a95821/informer/rest"
	"github.com/stretchr/testify/require"
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
		serveBody(rest.ContentTypeJSON, http.StatusOK, body)(w, r)
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
		serveBody(rest.ContentTypeJSON, http.StatusOK, body)(w, r)
	})
}

// recordedRequest is what a test server saw.
type recordedRequest struct {
	Path   string
	Query  map[string][]string
	Header http.Header
}

// testServer is an httptest server whose handler is supplied per test and
// which records every request.
type testServer struct {
	*httptest.Server
	mu       sync.Mutex // guards requests
	requests []recordedRequest
}

func newTestServer(t *testing.T, handler http.HandlerFunc) *testServer {
	t.Helper()
	ts := &testServer{}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.mu.Lock()
		ts.requests = append(ts.requests, recordedRequest{Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone()})
		ts.mu.Unlock()
		handler(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts
}

func (ts *testServer) lastRequest(t *testing.T) recordedRequest {
	t.Helper()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	require.NotEmpty(t, ts.requests)
	return ts.requests[len(ts.requests)-1]
}

// serveBody answers with one complete body.
func serveBody(contentType string, code int, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(code)
		_, _ = w.Write(body)
	}
}

// podListJSON is a small pod list, as a server sends it in JSON.
func podListJSON(t *testing.T) []byte {
	t.Helper()
	b, err := json.Marshal(&corev1.PodList{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"},
		ListMeta: metav1.ListMeta{ResourceVersion: "1"},
		Items:    []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "pod-0", ResourceVersion: "10"}}},
	})
	require.NoError(t, err)
	return b
}

// podsGVR is the resource the tests list.
var podsGVR = corev1.SchemeGroupVersion.WithResource("pods")

// listOnce lists pods once through a ListerWatcher built on cfg.
func listOnce(t *testing.T, cfg rest.Config) error {
	t.Helper()
	rc, err := rest.New(cfg)
	require.NoError(t, err)
	defer rc.CloseIdleConnections()
	lw, err := wire.New(rc, apiresource.Guess(corev1.SchemeGroupVersion.WithKind("Pod")), wire.Options{})
	require.NoError(t, err)
	_, err = lw.List(context.Background(), metav1.ListOptions{})
	return err
}

// requestsSnapshot copies what the server has recorded so far.
func (ts *testServer) requestsSnapshot() []recordedRequest {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]recordedRequest(nil), ts.requests...)
}
