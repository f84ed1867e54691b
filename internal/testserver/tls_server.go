package testserver

import (
	"crypto/tls"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// NewTLS starts a server that answers every request with PodListJSON over
// TLS, with p's server certificate, and closes it when the test ends.
// clientAuth says whether it asks for a client certificate
// (tls.RequestClientCert: asks, and takes any) or insists on one from p's
// CA (tls.RequireAndVerifyClientCert). The function it returns tells the
// CN of the last client certificate it was shown ("" for none yet): a
// test of where a certificate goes asks it.
func NewTLS(t testing.TB, p *PKI, clientAuth tls.ClientAuthType) (srv *httptest.Server, clientCN func() string) {
	t.Helper()
	body := PodListJSON(t)
	var mu sync.Mutex // guards cn
	var cn string
	srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) > 0 {
			mu.Lock()
			cn = r.TLS.PeerCertificates[0].Subject.CommonName
			mu.Unlock()
		}
		ServeBody(ContentTypeJSON, http.StatusOK, body)(w, r)
	}))
	srv.Config.ErrorLog = slog.NewLogLogger(slog.DiscardHandler, slog.LevelError) // refused handshakes are expected here
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{p.ServerCert}, MinVersion: tls.VersionTLS12,
		ClientAuth: clientAuth, ClientCAs: p.CAPool}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, func() string { mu.Lock(); defer mu.Unlock(); return cn }
}
