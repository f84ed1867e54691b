package rest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed31a95821/informer/internal/testserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fakeExec is an ExecConfig running this test binary as the plugin in the
// given mode, counting its runs in a temporary file.
type fakeExec struct {
	*ExecConfig
	runsFile, infoFile string
}

func newFakeExec(t *testing.T, mode string, extra ...ExecEnvVar) fakeExec {
	t.Helper()
	dir := t.TempDir()
	f := fakeExec{runsFile: filepath.Join(dir, "runs"), infoFile: filepath.Join(dir, "info")}
	f.ExecConfig = &ExecConfig{
		APIVersion: ExecAPIVersionV1, Command: os.Args[0], InteractiveMode: ExecInteractiveNever,
		Env: append([]ExecEnvVar{
			{Name: fakePluginEnv, Value: mode}, {Name: "FAKE_RUNS", Value: f.runsFile},
			{Name: "FAKE_INFO", Value: f.infoFile}, {Name: "FAKE_TOKEN_PREFIX", Value: "tok-"},
		}, extra...),
	}
	return f
}

func (f fakeExec) runs(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(f.runsFile)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(b), "\n")
}

// lastInfo is what the plugin's last run found in KUBERNETES_EXEC_INFO.
func (f fakeExec) lastInfo(t *testing.T) (info execCredential, stdinBytes int) {
	t.Helper()
	file, err := os.Open(f.infoFile)
	require.NoError(t, err)
	defer file.Close()
	var last string
	for sc := bufio.NewScanner(file); sc.Scan(); {
		last = sc.Text()
	}
	var line struct {
		Info       execCredential `json:"info"`
		StdinBytes int            `json:"stdinBytes"`
	}
	require.NoError(t, json.Unmarshal([]byte(last), &line))
	return line.Info, line.StdinBytes
}

// A token plugin runs once for many requests from many ListerWatchers of
// one Config, and its token is what the server sees.
func TestExecPluginToken(t *testing.T) {
	for _, version := range []string{ExecAPIVersionV1, ExecAPIVersionV1Beta1} {
		t.Run(version, func(t *testing.T) {
			var mu sync.Mutex
			valid := "tok-1"
			ts := tokenServer(t, &valid, &mu)
			plugin := newFakeExec(t, "token")
			plugin.APIVersion = version
			if version == ExecAPIVersionV1Beta1 {
				plugin.InteractiveMode = ExecInteractiveIfAvailable // runs too, without a terminal
			}
			cfg := Config{Host: ts.URL, Exec: plugin.ExecConfig}
			for range 2 {
				lw := newTestLW(t, ts, func(c *Config) { *c = cfg })
				for range 3 {
					_, err := lw.List(context.Background(), metav1.ListOptions{})
					require.NoError(t, err)
				}
			}
			assert.Equal(t, 1, plugin.runs(t), "one run, cached for every request of both ListerWatchers")
			info, stdin := plugin.lastInfo(t)
			assert.Equal(t, version, info.APIVersion)
			assert.False(t, info.Spec.Interactive)
			assert.Nil(t, info.Spec.Cluster, "no cluster info unless asked")
			assert.Zero(t, stdin, "the plugin gets no stdin")
		})
	}
}

// With an expirationTimestamp the credential is reused until then and the
// plugin runs again after.
func TestExecPluginExpiry(t *testing.T) {
	expiry := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	plugin := newFakeExec(t, "token", ExecEnvVar{Name: "FAKE_EXPIRY", Value: expiry.Format(time.RFC3339)})
	now := expiry.Add(-time.Hour)
	plugin.now = func() time.Time { return now }
	get := func() string {
		t.Helper()
		res, err := plugin.credential(context.Background(), nil)
		require.NoError(t, err)
		return res.token
	}
	assert.Equal(t, "tok-1", get())
	now = expiry.Add(-time.Second)
	assert.Equal(t, "tok-1", get(), "still valid a second before expiry")
	now = expiry
	assert.Equal(t, "tok-2", get(), "expired: run again")
	assert.Equal(t, 2, plugin.runs(t))
}

// A 401 makes the next request run the plugin again, once, however many
// requests failed with the same credential.
func TestExecPluginRefreshAfter401(t *testing.T) {
	var mu sync.Mutex
	valid := "tok-2" // the server has already revoked the first token
	ts := tokenServer(t, &valid, &mu)
	plugin := newFakeExec(t, "token")
	cfg := Config{Host: ts.URL, Exec: plugin.ExecConfig}

	lw := newTestLW(t, ts, func(c *Config) { *c = cfg })
	_, err := lw.List(context.Background(), metav1.ListOptions{})
	require.Error(t, err, "tok-1 is refused")
	plugin.invalidate("tok-1") // a second 401 with the same token: no second re-run
	_, err = lw.List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err, "tok-2 from the re-run")
	assert.Equal(t, 2, plugin.runs(t))

	// The authenticated client retries the request itself.
	mu.Lock()
	valid = "tok-3"
	mu.Unlock()
	client, err := NewAuthenticatedClient(cfg)
	require.NoError(t, err)
	defer client.CloseIdleConnections()
	resp, err := client.Get(ts.URL + "/api/v1/pods")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "401 with tok-2, one re-run, retried with tok-3")
	assert.Equal(t, 3, plugin.runs(t))
}

// A failing plugin's error carries its stderr, bounded, and never the
// credential it printed.
func TestExecPluginFailure(t *testing.T) {
	for _, mode := range []string{"fail", "garbage"} {
		t.Run(mode, func(t *testing.T) {
			plugin := newFakeExec(t, mode)
			_, err := plugin.credential(context.Background(), nil)
			require.ErrorIs(t, err, ErrExecPlugin)
			var ee *ExecError
			require.ErrorAs(t, err, &ee)
			assert.NotContains(t, err.Error(), fakeSecret, "the credential never reaches an error")
			assert.LessOrEqual(t, len(ee.Stderr), maxExecStderrBytes)
			if mode == "fail" {
				assert.Contains(t, err.Error(), "denied: [redacted] is revoked ?[31mred?[0m", "terminal escapes are neutralised")
				assert.Contains(t, err.Error(), "exit status 3")
			}
		})
	}
}

// A failing plugin is not run again for every request: requests in between
// get the same error, the wait doubles with each failure in a row, and a
// success resets it.
func TestExecPluginFailureBacksOff(t *testing.T) {
	plugin := newFakeExec(t, "fail")
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	plugin.now = func() time.Time { return now }
	mode := func(m string) { plugin.Env[0].Value = m }
	call := func() error { _, err := plugin.credential(context.Background(), nil); return err }

	first := call()
	require.ErrorIs(t, first, ErrExecPlugin)
	assert.Same(t, first, call(), "within the first second: the same error, no new run")
	assert.Equal(t, 1, plugin.runs(t))

	now = now.Add(time.Second) // the first wait is 1s
	require.ErrorIs(t, call(), ErrExecPlugin)
	assert.Equal(t, 2, plugin.runs(t))
	now = now.Add(1999 * time.Millisecond) // the second is 2s
	require.ErrorIs(t, call(), ErrExecPlugin)
	assert.Equal(t, 2, plugin.runs(t), "still inside the doubled wait")
	now = now.Add(time.Millisecond)
	require.ErrorIs(t, call(), ErrExecPlugin)
	assert.Equal(t, 3, plugin.runs(t))

	for range 10 { // the wait stops doubling at 30s
		now = now.Add(execRetryMax)
		require.ErrorIs(t, call(), ErrExecPlugin)
	}
	assert.Equal(t, 13, plugin.runs(t))

	mode("token")
	now = now.Add(execRetryMax)
	require.NoError(t, call())
	assert.Equal(t, 14, plugin.runs(t))
	mode("fail")
	plugin.invalidate("tok-14")
	require.ErrorIs(t, call(), ErrExecPlugin)
	now = now.Add(time.Second)
	require.ErrorIs(t, call(), ErrExecPlugin)
	assert.Equal(t, 16, plugin.runs(t), "the success reset the wait to 1s")

	// A request given up on is not a failure of the plugin.
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	now = now.Add(execRetryMax)
	_, err := plugin.credential(cancelled, nil)
	require.Error(t, err)
	require.ErrorIs(t, call(), ErrExecPlugin, "the next request runs the plugin at once")
}

func TestExecPluginHangIsKilled(t *testing.T) {
	plugin := newFakeExec(t, "hang")
	plugin.Timeout = 300 * time.Millisecond
	start := time.Now()
	_, err := plugin.credential(context.Background(), nil)
	require.ErrorIs(t, err, ErrExecPlugin)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "did not finish within 300ms and was killed")
	// Not a timing assertion on the plugin: a bound far above the timeout
	// that only a plugin left running an hour would exceed.
	assert.Less(t, time.Since(start), time.Minute)
}

func TestExecPluginBadConfig(t *testing.T) {
	always := &ExecConfig{APIVersion: ExecAPIVersionV1, Command: "login", InteractiveMode: ExecInteractiveAlways}
	err := Config{Host: "https://h", Exec: always}.Validate()
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "Exec.InteractiveMode", ce.Field)

	err = Config{Host: "https://h", BearerToken: "t", Exec: &ExecConfig{APIVersion: ExecAPIVersionV1, Command: "login"}}.Validate()
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "Exec", ce.Field)

	missing := &ExecConfig{APIVersion: ExecAPIVersionV1, Command: filepath.Join(t.TempDir(), "no-such-plugin"), InstallHint: "install it with brew"}
	_, err = missing.credential(context.Background(), nil)
	require.ErrorIs(t, err, ErrExecPlugin)
	assert.Contains(t, err.Error(), "install it with brew")

	wrong := newFakeExec(t, "token", ExecEnvVar{Name: "FAKE_API_VERSION", Value: ExecAPIVersionV1Beta1})
	_, err = wrong.credential(context.Background(), nil)
	require.ErrorIs(t, err, ErrExecPlugin)
	assert.Contains(t, err.Error(), "returned apiVersion")
}

// provideClusterInfo hands the plugin the cluster, CA inlined, and the
// cluster's exec extension.
func TestExecPluginClusterInfo(t *testing.T) {
	pki := testserver.NewPKI(t)
	srv, _ := testserver.NewTLS(t, pki, tls.NoClientCert)
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	require.NoError(t, os.WriteFile(caFile, pki.CAPEM, 0o600))
	plugin := newFakeExec(t, "token")
	plugin.ProvideClusterInfo = true
	plugin.ClusterConfig = json.RawMessage(`{"audience":"sts"}`)
	require.NoError(t, listOnce(t, Config{Host: srv.URL, CAFile: caFile, TLSServerName: "127.0.0.1", Exec: plugin.ExecConfig}))

	info, _ := plugin.lastInfo(t)
	require.NotNil(t, info.Spec.Cluster)
	assert.Equal(t, srv.URL, info.Spec.Cluster.Server)
	assert.Equal(t, pki.CAPEM, info.Spec.Cluster.CertificateAuthorityData, "the CA file's content, inlined")
	assert.Equal(t, "127.0.0.1", info.Spec.Cluster.TLSServerName)
	assert.JSONEq(t, `{"audience":"sts"}`, string(info.Spec.Cluster.Config))
}

// A plugin's client certificate is presented in the TLS handshake.
func TestExecPluginClientCertificate(t *testing.T) {
	pki := testserver.NewPKI(t)
	srv, clientCN := testserver.NewTLS(t, pki, tls.RequireAndVerifyClientCert)
	plugin := newFakeExec(t, "cert",
		ExecEnvVar{Name: "FAKE_CERT", Value: string(pki.ClientCert)}, ExecEnvVar{Name: "FAKE_KEY", Value: string(pki.ClientKey)})
	require.NoError(t, listOnce(t, Config{Host: srv.URL, CAData: pki.CAPEM, Exec: plugin.ExecConfig}))
	assert.Equal(t, "alice", clientCN())
	assert.Equal(t, 1, plugin.runs(t))
}

// When the plugin's certificate rotates, connections made with the old one
// are closed: an HTTP/2 connection would otherwise present it for ever.
func TestExecPluginCertificateRotationClosesConnections(t *testing.T) {
	first, second := testserver.NewPKI(t), testserver.NewPKI(t)
	clientCAs := x509.NewCertPool()
	clientCAs.AppendCertsFromPEM(first.CAPEM)
	clientCAs.AppendCertsFromPEM(second.CAPEM)
	var mu sync.Mutex // guards seen
	var seen []string // which PKI's client certificate each request carried
	body := testserver.PodListJSON(t)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" { // a stand-in for a watch: open until the connection goes
			w.WriteHeader(http.StatusOK)
			http.NewResponseController(w).Flush()
			<-r.Context().Done()
			return
		}
		mu.Lock()
		switch raw := r.TLS.PeerCertificates[0].Raw; {
		case bytes.Equal(raw, pemBlock(t, first.ClientCert)):
			seen = append(seen, "first")
		case bytes.Equal(raw, pemBlock(t, second.ClientCert)):
			seen = append(seen, "second")
		}
		mu.Unlock()
		testserver.ServeBody(ContentTypeJSON, http.StatusOK, body)(w, r)
	}))
	srv.EnableHTTP2 = true
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{first.ServerCert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: clientCAs}
	srv.StartTLS()
	defer srv.Close()

	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert"), filepath.Join(dir, "key")
	writeCert := func(p *testserver.PKI) {
		require.NoError(t, os.WriteFile(certFile, p.ClientCert, 0o600))
		require.NoError(t, os.WriteFile(keyFile, p.ClientKey, 0o600))
	}
	writeCert(first)
	expiry := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	plugin := newFakeExec(t, "cert", ExecEnvVar{Name: "FAKE_CERT_FILE", Value: certFile},
		ExecEnvVar{Name: "FAKE_KEY_FILE", Value: keyFile}, ExecEnvVar{Name: "FAKE_EXPIRY", Value: expiry.Format(time.RFC3339)})
	now := expiry.Add(-time.Minute)
	plugin.now = func() time.Time { return now }

	lw := newTestLW(t, &testserver.Recorder{Server: srv}, func(c *Config) { c.CAData, c.Exec = first.CAPEM, plugin.ExecConfig })
	list := func() {
		t.Helper()
		_, err := lw.List(context.Background(), metav1.ListOptions{})
		require.NoError(t, err)
	}
	list()
	watch, err := lw.http.Get(srv.URL + "/hang")
	require.NoError(t, err)
	watchEnded := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(watch.Body)
		watch.Body.Close()
		watchEnded <- err
	}()
	list()
	writeCert(second)
	plugin.Env[len(plugin.Env)-1].Value = expiry.Add(time.Hour).Format(time.RFC3339) // the next credential's expiry
	now = expiry                                                                     // the first certificate's credential has expired
	list()
	select {
	case err := <-watchEnded:
		assert.Error(t, err, "the long request on the old connection ends with an error")
	case <-time.After(30 * time.Second):
		watch.Body.Close() // so that the server's Close does not wait for it
		t.Fatal("the long request on the old connection is still open after the rotation")
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"first", "first", "second"}, seen, "new connections present the new certificate")
	assert.Equal(t, 2, plugin.runs(t))
}

func pemBlock(t *testing.T, data []byte) []byte {
	t.Helper()
	b, _ := pem.Decode(data)
	require.NotNil(t, b)
	return b.Bytes
}
