package rest

import (
	"net/http"
	"net/url"
	"strings"
)

// originTransport keeps a client certificate for the configured server.
// A TLS client presents its certificate to whatever server asks for one
// during the handshake, and one *http.Client may be handed requests for
// any host (your own requests through Client.Do or a client from
// NewAuthenticatedClient). So the transport that holds the certificate
// (static, or the exec plugin's, which would even run the plugin for a
// stranger's handshake) carries only the requests for cfg.Host; every
// other request goes through a twin with the same settings and no
// certificate. Redirects are never followed (refuseRedirect), so a 3xx
// cannot lead a request elsewhere either. The bearer token follows the
// same rule (authenticator.authorize), decided by the same function,
// sameOrigin.
//
// One limit is Go's: a proxy reached over TLS (a ProxyURL, or an
// HTTPS_PROXY, of scheme https) shares the TLS settings of the connection
// it carries, so it is shown the certificate if it asks for one; client-go
// has the same limit. A proxy reached over plain HTTP only tunnels the
// handshake, and sees nothing.
type originTransport struct {
	origin  *url.URL
	own     http.RoundTripper // presents the client certificate
	foreign *http.Transport   // the same settings, no client certificate
}

// newOriginTransport routes the requests for host through own and the
// others through a clone of base without a client certificate.
func newOriginTransport(host string, own http.RoundTripper, base *http.Transport) (*originTransport, error) {
	origin, err := url.Parse(host)
	if err != nil { // ruled out by Validate; kept so a bad Host never panics
		return nil, &ConfigError{Field: "Host", Reason: err.Error()}
	}
	foreign := base.Clone()
	foreign.TLSClientConfig = base.TLSClientConfig.Clone()
	foreign.TLSClientConfig.Certificates, foreign.TLSClientConfig.GetClientCertificate = nil, nil
	return &originTransport{origin: origin, own: own, foreign: foreign}, nil
}

// RoundTrip sends req through the transport its host may see.
func (o *originTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if sameOrigin(o.origin, req.URL) {
		return o.own.RoundTrip(req)
	}
	return o.foreign.RoundTrip(req)
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach both
// transports.
func (o *originTransport) CloseIdleConnections() {
	if c, ok := o.own.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
	o.foreign.CloseIdleConnections()
}

// sameOrigin reports whether u is on the server origin names: the same
// scheme and host (with its port), as written. It is the one rule of
// where credentials go, the token (authenticator) and the client
// certificate (originTransport) alike: a redirect elsewhere, or a request
// of the caller's to another host through the same client, never carries
// them.
func sameOrigin(origin, u *url.URL) bool {
	return strings.EqualFold(u.Scheme, origin.Scheme) && strings.EqualFold(u.Host, origin.Host)
}
