package rest

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/seed31a95821/informer/internal/testserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The authenticated client sends credentials to the configured server and
// to nobody else, even when that server redirects there.
func TestAuthenticatedClientSendsCredentialsOnlyToItsServer(t *testing.T) {
	elsewhere := testserver.New(t, testserver.ServeBody("text/plain", http.StatusOK, []byte("ok")))
	home := testserver.New(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/landing", http.StatusFound)
	})
	client, err := NewAuthenticatedClient(Config{Host: home.URL, BearerToken: "s3cret", UserAgent: "demo/1"})
	require.NoError(t, err)
	defer client.CloseIdleConnections()

	// A redirect is handed back, not followed (NewHTTPClient's policy):
	// the other host is never asked, with or without the token.
	resp, err := client.Get(home.URL + "/apis/apps/v1/deployments")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusFound, resp.StatusCode)
	assert.Equal(t, elsewhere.URL+"/landing", resp.Header.Get("Location"))
	got := home.Last(t)
	assert.Equal(t, "Bearer s3cret", got.Header.Get("Authorization"))
	assert.Equal(t, "demo/1", got.Header.Get("User-Agent"))
	assert.Empty(t, elsewhere.Requests(), "the redirect was followed")

	resp, err = client.Get(elsewhere.URL + "/direct")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Empty(t, elsewhere.Last(t).Header.Get("Authorization"), "a request to another host through the same client")
}

// After a 401 a request with a replayable body is retried with the new
// token; one whose body cannot be replayed is not, and the 401 is returned.
func TestAuthenticatedClientRetriesReplayableBodies(t *testing.T) {
	var mu sync.Mutex
	valid := "new"
	var bodies []string
	ts := testserver.New(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		ok := r.Header.Get("Authorization") == "Bearer "+valid
		mu.Unlock()
		if !ok {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusCreated)
	})
	file := filepath.Join(t.TempDir(), "token")
	require.NoError(t, writeFileString(file, "old"))
	client, err := NewAuthenticatedClient(Config{Host: ts.URL, BearerTokenFile: file})
	require.NoError(t, err)
	defer client.CloseIdleConnections()
	require.NoError(t, writeFileString(file, "new"))

	resp, err := client.Post(ts.URL+"/api/v1/namespaces/a/configmaps", "application/json", strings.NewReader(`{"x":1}`))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusCreated, resp.StatusCode, "http.NewRequest set GetBody for the strings.Reader")

	mu.Lock()
	valid = "newer"
	mu.Unlock()
	require.NoError(t, writeFileString(file, "newer"))
	req, err := http.NewRequest(http.MethodPost, ts.URL+"/x", io.NopCloser(strings.NewReader("once")))
	require.NoError(t, err)
	resp, err = client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "a one-shot body is not replayed")
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{`{"x":1}`, `{"x":1}`, "once"}, bodies)
}

// proxy-url sends requests through the proxy; disable-compression stops
// the gzip request header.
func TestProxyAndCompression(t *testing.T) {
	backend := testserver.New(t, testserver.ServeBody("text/plain", http.StatusOK, []byte("ok")))
	target, err := url.Parse(backend.URL)
	require.NoError(t, err)
	var mu sync.Mutex
	var proxied []string
	proxy := testserver.New(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		// Absolute: a forward proxy request. The proxy's own transport would
		// add gzip again, so the client's header is read here.
		proxied = append(proxied, r.URL.String()+" gzip="+strconv.FormatBool(r.Header.Get("Accept-Encoding") != ""))
		mu.Unlock()
		httputil.NewSingleHostReverseProxy(target).ServeHTTP(w, r)
	})
	for _, disable := range []bool{false, true} {
		client, err := NewAuthenticatedClient(Config{Host: backend.URL, ProxyURL: proxy.URL, DisableCompression: disable})
		require.NoError(t, err)
		resp, err := client.Get(backend.URL + "/api")
		require.NoError(t, err)
		resp.Body.Close()
		client.CloseIdleConnections()
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{backend.URL + "/api gzip=true", backend.URL + "/api gzip=false"}, proxied)
}

func writeFileString(path, s string) error {
	return os.WriteFile(path, []byte(s), 0o600)
}

// An HTTPS server behind proxy-url is reached through a CONNECT tunnel, and
// TLS (CA, server name) is checked end to end through it.
func TestProxyConnectTunnel(t *testing.T) {
	pki := testserver.NewPKI(t)
	backend, _ := testserver.NewTLS(t, pki, tls.NoClientCert)
	var wg sync.WaitGroup
	var mu sync.Mutex // guards tunnels
	var tunnels []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
			return
		}
		mu.Lock()
		tunnels = append(tunnels, r.Host)
		mu.Unlock()
		upstream, err := net.Dial("tcp", r.Host)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		// Added before Hijack: until then the server's Close waits for this
		// handler, so the Add cannot race the test's Wait.
		wg.Add(2)
		w.WriteHeader(http.StatusOK)
		client, buffered, err := http.NewResponseController(w).Hijack()
		if err != nil {
			wg.Add(-2)
			upstream.Close()
			return
		}
		// Each direction closes both ends when it finishes, so the other
		// one ends too and nothing outlives the test. Bytes the server had
		// already read past the CONNECT request are in buffered.
		pipe := func(dst net.Conn, src io.Reader) {
			defer wg.Done()
			_, _ = io.Copy(dst, src)
			client.Close()
			upstream.Close()
		}
		go pipe(upstream, buffered.Reader)
		go pipe(client, upstream)
	}))
	defer wg.Wait()
	defer proxy.Close() // first: it waits for the handlers

	u, err := url.Parse(backend.URL)
	require.NoError(t, err)
	cfg := Config{Host: backend.URL, CAData: pki.CAPEM, ProxyURL: proxy.URL, TLSServerName: "127.0.0.1"}
	require.NoError(t, listOnce(t, cfg))
	mu.Lock()
	assert.Equal(t, []string{u.Host}, tunnels)
	mu.Unlock()

	cfg.TLSServerName = "not-the-server"
	err = listOnce(t, cfg)
	var certErr x509.HostnameError
	assert.ErrorAs(t, err, &certErr, "the server name is verified through the tunnel")
}
