package rest

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/seed31a95821/informer/internal/boundedfile"
)

// NewHTTPClient builds the *http.Client described by cfg's TLS and
// transport fields: server verification against the CA bundle (or the
// system roots), an optional client certificate (static or from the exec
// plugin), the proxy, compression, and HTTP/2 health checks. It adds no
// bearer token: a Client (New) does, and NewAuthenticatedClient wraps this
// client to do so for your own requests.
//
// One client holds one connection pool. Everything built on one Client
// shares it; to share it between Clients (two Configs for one server),
// build it once and put it in each Config's HTTPClient: over HTTP/2 they
// then share a single TCP connection, as client-go's transport cache
// arranges.
//
// The client certificate is presented only to cfg.Host: requests for
// any other host go through a twin transport without it
// (originTransport).
//
// The client has no overall Timeout: it would cut long-lived watches. A
// Client bounds the wait for every response's headers
// (Config.ResponseHeaderTimeout), and its users their non-watch requests
// (Config.Timeout). It follows no redirect (see refuseRedirect).
func NewHTTPClient(cfg Config) (*http.Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	tlsConfig, err := newTLSConfig(cfg)
	if err != nil {
		return nil, err
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = tlsConfig
	t.ForceAttemptHTTP2 = true
	// Several watches and lists to one server: keep more than the default 2
	// idle connections for HTTP/1.1 servers.
	t.MaxIdleConnsPerHost = 25
	// A watch on a dead HTTP/2 connection would wait forever for bytes that
	// never come. Pinging an idle connection lets the transport notice a
	// vanished server within ~45s and fail the read.
	t.HTTP2 = &http.HTTP2Config{SendPingTimeout: 30 * time.Second, PingTimeout: 15 * time.Second}
	if cfg.ProxyURL != "" { // else the cloned default: the proxy environment
		proxy, _ := url.Parse(cfg.ProxyURL) // checked by Validate
		t.Proxy = http.ProxyURL(proxy)
	}
	t.DisableCompression = cfg.DisableCompression
	var rt http.RoundTripper = t
	if cfg.Exec != nil {
		rt = newCertRotatingTransport(cfg.Exec, t)
	}
	if len(tlsConfig.Certificates) > 0 || tlsConfig.GetClientCertificate != nil {
		// The certificate goes to cfg.Host only (originTransport).
		if rt, err = newOriginTransport(cfg.Host, rt, t); err != nil {
			return nil, err
		}
	}
	return &http.Client{Transport: rt, CheckRedirect: refuseRedirect}, nil
}

// newTLSConfig reads the certificate material named by cfg (files are read
// once, here; rotate them by building a new client).
func newTLSConfig(cfg Config) (*tls.Config, error) {
	tc := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         cfg.TLSServerName,
		InsecureSkipVerify: cfg.Insecure, //nolint:gosec // explicit opt-in, documented on Config.Insecure
	}
	caPEM, err := dataOrFile(cfg.CAData, cfg.CAFile)
	if err != nil {
		return nil, fmt.Errorf("rest: reading CA bundle: %w", err)
	}
	if len(caPEM) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caPEM) {
			return nil, &ConfigError{Field: "CAData/CAFile", Reason: "contains no PEM certificate"}
		}
		tc.RootCAs = pool
	}
	certPEM, err := dataOrFile(cfg.CertData, cfg.CertFile)
	if err != nil {
		return nil, fmt.Errorf("rest: reading client certificate: %w", err)
	}
	keyPEM, err := dataOrFile(cfg.KeyData, cfg.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("rest: reading client key: %w", err)
	}
	if len(certPEM) > 0 {
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, &ConfigError{Field: "CertData/KeyData", Reason: err.Error()}
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	if cfg.Exec != nil {
		// The plugin's certificate, run (or taken from its cache) when a
		// handshake asks for one, so it follows the plugin's rotation.
		tc.GetClientCertificate = func(cri *tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return cfg.Exec.clientCertificate(cri.Context(), func() (*execCluster, error) { return newExecCluster(cfg) })
		}
	}
	return tc, nil
}

// dataOrFile returns data when set, else the content of file when set.
func dataOrFile(data []byte, file string) ([]byte, error) {
	if len(data) > 0 || file == "" {
		return data, nil
	}
	return boundedfile.ReadFile(file)
}
