package rest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"golang.org/x/time/rate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Client is one connection to one API server: the HTTP transport and its
// connection pool, the credentials (token, token file, exec plugin,
// client certificate), the request rate limit, the refusal of redirects,
// the metrics of every request, and the decoding of error answers. It is
// built once, by New, and shared by everything that talks to that server:
// the informers of a factory (reflector/wire), the reads and writes of
// package client, and your own requests through Do. Sharing it shares the
// rate budget and, over HTTP/2, a single TCP connection.
//
// A Client is safe for concurrent use.
type Client struct {
	cfg     Config       // with its defaults (Config.WithDefaults)
	http    *http.Client // authenticating, refusing redirects
	auth    *authenticator
	limiter *rate.Limiter // nil: no client-side rate limit
}

// New validates cfg, reads the files it names (token, certificates, CA
// bundle) and builds the Client: on cfg.HTTPClient when set (to share its
// connections), else on a client of its own (NewHTTPClient); rate-limited
// by cfg.RateLimiter when set, else by a limiter of its own built from
// cfg.QPS and cfg.Burst.
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	auth, err := newAuthenticator(cfg)
	if err != nil {
		return nil, err
	}
	base := cfg.HTTPClient
	if base == nil {
		if base, err = NewHTTPClient(cfg); err != nil {
			return nil, err
		}
	}
	next := base.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	hc := *base // a copy: base may be the caller's, shared with others
	hc.Transport = &authRoundTripper{auth: auth, base: next}
	hc.CheckRedirect = refuseRedirect
	limiter := cfg.RateLimiter
	if limiter == nil {
		limiter = NewRateLimiter(cfg)
	}
	return &Client{cfg: cfg, http: &hc, auth: auth, limiter: limiter}, nil
}

// Config returns the Config the Client was built from, with its defaults
// filled in: the limits (Timeout, MaxObjectBytes, MaxFrameBytes) and the
// encoding (ContentType) every user of the Client works with.
func (c *Client) Config() Config { return c.cfg }

// URL lays out the REST path of a resource's collection on this server,
// or, with subpath, of something under it (resourceURL).
func (c *Client) URL(gvr schema.GroupVersionResource, namespace string, subpath ...string) *url.URL {
	return resourceURL(c.cfg.Host, gvr, namespace, subpath...)
}

// Do sends req and returns the server's answer, whatever its code: it
// waits for the rate limit, sets the User-Agent (unless req has one),
// adds the credentials (only for requests to the configured Host), gives
// up when the response headers do not come within ResponseHeaderTimeout
// (an error wrapping ErrResponseHeaderTimeout), records the request in
// cfg.Metrics, and never follows a redirect. Turn a non-2xx answer into an
// error with Error. The response body is the caller's to close; it lives
// in req's context.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	if c.limiter != nil {
		if err := c.limiter.Wait(req.Context()); err != nil {
			return nil, fmt.Errorf("waiting for the client rate limit: %w", err)
		}
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", c.cfg.UserAgent)
	}
	start := time.Now()
	resp, err := c.send(req)
	c.cfg.Metrics.RecordRequest(req, resp, err, time.Since(start))
	return resp, c.Redact(err)
}

// send sends req, abandoning it (by cancelling its context) if the
// response headers do not come within ResponseHeaderTimeout. On success
// the body's Close releases that context.
func (c *Client) send(req *http.Request) (*http.Response, error) {
	d := c.cfg.ResponseHeaderTimeout
	if d < 0 {
		return c.http.Do(req)
	}
	ctx, cancel := context.WithCancelCause(req.Context())
	timer := time.AfterFunc(d, func() { cancel(ErrResponseHeaderTimeout) })
	resp, err := c.http.Do(req.WithContext(ctx))
	if timer.Stop() {
		if err != nil {
			cancel(nil)
			return nil, err
		}
		resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
		return resp, nil
	}
	// The timer fired: the context is cancelled, even if the headers made
	// it just in time, and the body with it.
	defer cancel(nil)
	if err == nil {
		resp.Body.Close()
		// Never (nil, nil): whatever cancelled the context first (the
		// caller, a deadline, or the timer) is the error.
		err = context.Cause(ctx)
	}
	if errors.Is(context.Cause(ctx), ErrResponseHeaderTimeout) {
		return nil, fmt.Errorf("%w (%v): %w", ErrResponseHeaderTimeout, d, err)
	}
	return nil, err
}

// cancelOnClose releases a response's context when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelCauseFunc
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel(nil)
	return err
}

// Error turns a non-2xx answer to a verb ("list", "get", "patch"...) on
// the resource gr into an error: a *RedirectError for a 3xx, else an
// *apierrors.StatusError from the server's Status body, or one built from
// the HTTP code when the body is something else, Retry-After included.
// Every text the server wrote is redacted of the credentials this Client
// sends. It reads at most 64 KiB of the body and does not close it.
func (c *Client) Error(resp *http.Response, verb string, gr schema.GroupResource) error {
	red := redactor{auth: c.auth, extra: sentToken(resp)}
	if resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		loc := red.redact(resp.Header.Get("Location"))
		return &RedirectError{Verb: verb, Resource: gr.Resource, Code: resp.StatusCode, Location: loc}
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBodyBytes))
	return errorFromResponse(resp, body, verb, gr, red)
}

// Redact returns err with every credential this Client sends replaced in
// its text, still unwrapping to err (errors.Is and errors.As see what
// they saw before). Errors from Do and Error are redacted already; use it
// for errors that carry text a server wrote by other ways.
func (c *Client) Redact(err error) error { return redactor{auth: c.auth}.err(err) }

// RedactStatus replaces every credential this Client sends in the text
// fields of s, in place: a server may echo a token in a Status, such as
// the one of a watch's ERROR event.
func (c *Client) RedactStatus(s *metav1.Status) { redactor{auth: c.auth}.status(s) }

// CloseIdleConnections closes the connections of the Client's pool that
// carry no request. Connections in use are left alone, so it is harmless
// on a Client others share.
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

// RateLimiter returns the limiter every request of the Client waits on
// (nil: no limit). Put it in another Config's RateLimiter to give a second
// Client, another cluster's informers say, the same budget.
func (c *Client) RateLimiter() *rate.Limiter { return c.limiter }
