package rest

import (
	"context"
	"crypto/tls"
	"net/http"
	"testing"

	"github.com/seed31a95821/informer/internal/testserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The client certificate, like the token, goes only to the configured
// server. Two TLS servers of one CA, on two ports of 127.0.0.1: home is
// Config.Host, stranger asks every client for a certificate. Requests for
// stranger through the Client (Do) and through NewAuthenticatedClient
// show it none, static or from an exec plugin (whose plugin is not even
// run for it), while home still gets it. Before, the one transport held
// the certificate and showed it to any server that asked.
func TestClientCertificateGoesOnlyToTheConfiguredHost(t *testing.T) {
	pki := testserver.NewPKI(t)
	for _, source := range []string{"static", "exec plugin"} {
		t.Run(source, func(t *testing.T) {
			home, homeCN := testserver.NewTLS(t, pki, tls.RequireAndVerifyClientCert)
			stranger, strangerCN := testserver.NewTLS(t, pki, tls.RequestClientCert)
			cfg := Config{Host: home.URL, CAData: pki.CAPEM}
			var plugin fakeExec
			if source == "static" {
				cfg.CertData, cfg.KeyData = pki.ClientCert, pki.ClientKey
			} else {
				plugin = newFakeExec(t, "cert",
					ExecEnvVar{Name: "FAKE_CERT", Value: string(pki.ClientCert)}, ExecEnvVar{Name: "FAKE_KEY", Value: string(pki.ClientKey)})
				cfg.Exec = plugin.ExecConfig
			}
			rc, err := New(cfg)
			require.NoError(t, err)
			t.Cleanup(rc.CloseIdleConnections)
			hc, err := NewAuthenticatedClient(cfg)
			require.NoError(t, err)
			t.Cleanup(hc.CloseIdleConnections)

			get := func(send func(*http.Request) (*http.Response, error), url string) {
				t.Helper()
				req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url+"/api/v1/pods", nil)
				require.NoError(t, err)
				resp, err := send(req)
				require.NoError(t, err)
				resp.Body.Close()
				assert.Equal(t, http.StatusOK, resp.StatusCode)
			}
			get(rc.Do, stranger.URL)
			get(hc.Do, stranger.URL)
			assert.Empty(t, strangerCN(), "another host was shown the client certificate")
			if plugin.ExecConfig != nil {
				assert.Zero(t, plugin.runs(t), "the plugin ran for another host's handshake")
			}

			get(rc.Do, home.URL)
			get(hc.Do, home.URL)
			assert.Equal(t, "alice", homeCN(), "the configured host gets it")
		})
	}
}
