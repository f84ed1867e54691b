package wire

import (
	"io"
	"net/http"
	"net/url"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// This file exports, for the write client in client/, the two pieces of the
// ListerWatcher's request path that every API client needs: authentication
// from Config and the decoding of error responses. It is a stop-gap until
// an authenticated transport lives in this package; then client/ switches
// to it and BearerRoundTripper goes.

// BearerRoundTripper wraps next so that every request to cfg.Host's origin
// carries the bearer token cfg names: BearerToken, or BearerTokenFile, which
// is re-read as the ListerWatcher re-reads it (every minute and after a
// 401). A request to any other origin (a redirect elsewhere) is sent without
// it: a credential goes only where it came from. With neither set, next is
// returned as it is.
func BearerRoundTripper(cfg Config, next http.RoundTripper) (http.RoundTripper, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.BearerToken == "" && cfg.BearerTokenFile == "" {
		return next, nil
	}
	tokens, err := newTokenSource(cfg.BearerToken, cfg.BearerTokenFile)
	if err != nil {
		return nil, err
	}
	origin, _ := url.Parse(cfg.Host) // validated above
	return &bearerTransport{next: next, tokens: tokens, scheme: origin.Scheme, host: origin.Host}, nil
}

type bearerTransport struct {
	next         http.RoundTripper
	tokens       *tokenSource
	scheme, host string // the origin the token belongs to
}

// RoundTrip implements http.RoundTripper. It does not modify req (the
// contract of RoundTrip): it sends a clone with the header set.
func (t *bearerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != t.scheme || req.URL.Host != t.host || req.Header.Get("Authorization") != "" {
		return t.next.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+t.tokens.Token())
	resp, err := t.next.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		t.tokens.Invalidate() // the file may hold a newer token
	}
	return resp, err
}

// ErrorFromResponse turns a non-2xx response into the error the
// ListerWatcher would return: an *apierrors.StatusError from the server's
// Status body, or one built from the HTTP code when the body is something
// else (with at most 512 bytes of it quoted), Retry-After included. It reads
// at most 64 KiB of the body and does not close it.
func ErrorFromResponse(resp *http.Response, verb string, gr schema.GroupResource) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBodyBytes))
	return errorFromResponse(resp, body, verb, gr)
}
