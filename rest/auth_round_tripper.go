package rest

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// authenticator adds one Config's credentials to requests for its server:
// a static token, a token file re-read as it rotates, or an exec plugin's
// token. (Client certificates, static or from a plugin, are presented by
// the TLS layer; see newTLSConfig.) It is shared by a Client's requests
// and by the RoundTripper of NewAuthenticatedClient, and is safe
// for concurrent use.
type authenticator struct {
	cfg    Config
	origin *url.URL     // scheme and host of cfg.Host: credentials go nowhere else
	tokens *tokenSource // static token or token file
}

// newAuthenticator reads the token file once (see newTokenSource).
func newAuthenticator(cfg Config) (*authenticator, error) {
	tokens, err := newTokenSource(cfg.BearerToken, cfg.BearerTokenFile)
	if err != nil {
		return nil, err
	}
	origin, err := url.Parse(cfg.Host)
	if err != nil { // ruled out by Validate; kept so a bad Host never panics
		return nil, &ConfigError{Field: "Host", Reason: err.Error()}
	}
	return &authenticator{cfg: cfg, origin: origin, tokens: tokens}, nil
}

// secrets returns every credential this authenticator has sent or may send
// that error text must never show: the static token or the last tokens read
// from the token file, and the last credentials an exec plugin issued.
func (a *authenticator) secrets() []string {
	s := a.tokens.secrets()
	if a.cfg.Exec != nil {
		s = append(append([]string(nil), s...), a.cfg.Exec.issuedSecrets()...)
	}
	return s
}

// authorize sets the Authorization header of req, which the caller owns.
// An exec plugin runs here when its cached credential is missing or
// expired; its failure is returned as an *ExecError.
func (a *authenticator) authorize(req *http.Request) error {
	if !sameOrigin(a.origin, req.URL) {
		return nil
	}
	token := a.tokens.Token()
	if a.cfg.Exec != nil {
		res, err := a.cfg.Exec.credential(req.Context(), a.execCluster)
		if err != nil {
			return err
		}
		token = res.token
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return nil
}

// unauthorized is told that the server answered 401 to a request that
// carried the Authorization header sent: the token file may hold a newer
// token, and the plugin's credential may have been revoked early.
func (a *authenticator) unauthorized(sent string) {
	a.tokens.Invalidate()
	if a.cfg.Exec != nil {
		a.cfg.Exec.invalidate(strings.TrimPrefix(sent, "Bearer "))
	}
}

// execCluster describes the cluster to a plugin that asked for it
// (provideClusterInfo), the CA bundle inlined as kubectl does.
func (a *authenticator) execCluster() (*execCluster, error) {
	return newExecCluster(a.cfg)
}

func newExecCluster(cfg Config) (*execCluster, error) {
	ca, err := dataOrFile(cfg.CAData, cfg.CAFile)
	if err != nil {
		return nil, fmt.Errorf("rest: reading CA bundle for the exec plugin: %w", err)
	}
	return &execCluster{
		Server: cfg.Host, TLSServerName: cfg.TLSServerName, InsecureSkipTLSVerify: cfg.Insecure,
		CertificateAuthorityData: ca, ProxyURL: cfg.ProxyURL, DisableCompression: cfg.DisableCompression,
		Config: cfg.Exec.ClusterConfig,
	}, nil
}

// NewAuthenticatedClient returns an *http.Client for your own requests to
// cfg.Host (writes, discovery, anything the informers do not do). It is
// NewHTTPClient's client with every credential of cfg added: the token,
// the token file re-read as it rotates, the client certificate, and exec
// plugin credentials, cached and refreshed as for the informers (one
// *ExecConfig, one cache). Requests to any other host get no credentials,
// and, as for the informers, redirects are handed back to the caller
// (a 3xx response), never followed: the API does not redirect, and a
// followed redirect is how credentials leak.
//
// On a 401 the credential is refreshed (token file re-read, plugin re-run
// once) and, when that gives a different one and the request body can be
// replayed (no body, or Request.GetBody set, as http.NewRequest sets it
// for in-memory bodies), the request is sent once more.
func NewAuthenticatedClient(cfg Config) (*http.Client, error) {
	c, err := NewHTTPClient(cfg)
	if err != nil {
		return nil, err
	}
	if c.Transport, err = newAuthRoundTripper(cfg, c.Transport); err != nil {
		return nil, err
	}
	return c, nil
}

// newAuthRoundTripper wraps base (which should present cfg's TLS settings:
// a NewHTTPClient transport) so that every request to cfg.Host carries cfg's
// credentials and User-Agent, as NewAuthenticatedClient describes. A request
// that already has an Authorization header is sent as it is.
func newAuthRoundTripper(cfg Config, base http.RoundTripper) (http.RoundTripper, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a, err := newAuthenticator(cfg.WithDefaults())
	if err != nil {
		return nil, err
	}
	return &authRoundTripper{auth: a, base: base, retry: true}, nil
}

// authRoundTripper is the RoundTripper newAuthRoundTripper returns.
type authRoundTripper struct {
	auth *authenticator
	base http.RoundTripper
	// retry resends a request refused with 401 once, with a fresher
	// credential (NewAuthenticatedClient). Without it (a Client) the 401
	// only drops the cached credential and is the caller's answer, as in
	// client-go: the next request carries the fresh one.
	retry bool
}

// RoundTrip adds the credentials to a copy of req (a RoundTripper must not
// change its argument) and retries once after a 401 as documented above.
func (rt *authRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Authorization") != "" || !sameOrigin(rt.auth.origin, req.URL) {
		return rt.base.RoundTrip(req)
	}
	first, err := rt.prepare(req)
	if err != nil {
		return nil, redactor{auth: rt.auth}.err(err)
	}
	resp, err := rt.base.RoundTrip(first)
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	sent := first.Header.Get("Authorization")
	rt.auth.unauthorized(sent)
	if !rt.retry {
		return resp, nil
	}
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return resp, nil // the body is gone: the caller decides
	}
	second, err := rt.prepare(req)
	if err != nil {
		resp.Body.Close()
		return nil, redactor{auth: rt.auth}.err(err)
	}
	if second.Header.Get("Authorization") == sent {
		return resp, nil // nothing new to try
	}
	// Drain a little so the connection can be reused, then try again.
	_, _ = io.CopyN(io.Discard, resp.Body, 4<<10)
	resp.Body.Close()
	if req.GetBody != nil {
		if second.Body, err = req.GetBody(); err != nil {
			return nil, fmt.Errorf("rest: replaying request body after 401: %w", err)
		}
	}
	return rt.base.RoundTrip(second)
}

// CloseIdleConnections closes the idle connections of the transport under
// it, so that http.Client.CloseIdleConnections, which looks for this
// method, reaches them: without it they, and their goroutines, would stay
// until the server drops them or 90 s pass.
func (rt *authRoundTripper) CloseIdleConnections() {
	if c, ok := rt.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// prepare clones req and adds the User-Agent and credentials.
func (rt *authRoundTripper) prepare(req *http.Request) (*http.Request, error) {
	out := req.Clone(req.Context())
	if out.Header.Get("User-Agent") == "" {
		out.Header.Set("User-Agent", rt.auth.cfg.UserAgent)
	}
	if err := rt.auth.authorize(out); err != nil {
		return nil, err
	}
	return out, nil
}
