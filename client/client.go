package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"time"

	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/metrics"
	"github.com/seed31a95821/informer/reflector/wire"
)

var errUnknownType = informer.ErrUnknownType

// Options configure a Client. The zero value is ready to use.
type Options struct {
	// Scheme maps Go types to kinds and encodes them. Nil means
	// apiresource.NewScheme(): pass the factory's scheme when you registered
	// types of your own.
	Scheme *runtime.Scheme
	// Resources override how a kind maps to its resource, as
	// FactoryOptions.Resources does: pass the same list.
	Resources []informer.Resource
	// HTTPClient sends the requests. Nil means wire.NewHTTPClient(cfg);
	// pass one to share its connections with your informers. cfg's
	// credentials (token, token file, exec plugin) are added either way,
	// by wire.NewAuthRoundTripper.
	HTTPClient *http.Client
	// Metrics, when set, receives a count and a latency of every request,
	// under client-go's rest_client_* names (metrics.Registry.RecordRequest):
	// pass the informers' registry, and reads and writes are charted
	// together.
	Metrics *metrics.Registry
}

// Client writes (and reads, when a read must be fresh) any registered type
// through one API server. It is safe for concurrent use.
type Client struct {
	cfg       wire.Config // with its defaults (wire.Config.WithDefaults)
	http      *http.Client
	scheme    *runtime.Scheme
	codecs    serializer.CodecFactory
	resources []informer.Resource
	limiter   *rate.Limiter // nil: no client-side rate limit
	metrics   *metrics.Registry
}

// CloseIdleConnections closes the keep-alive connections the client's
// requests left open, and the goroutines that serve them, which would
// otherwise stay until the server drops them or 90 s pass. Call it when you
// are done with the client; connections in use are left alone.
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

// New returns a client for the API server cfg describes: the same
// wire.Config the informers use, with its TLS settings, credentials (bearer
// token, token file, client certificate, exec plugin), ContentType,
// MaxObjectBytes, Timeout and client-side rate limit: cfg.RateLimiter when
// set (share one with your informers that way), else one of the client's
// own from cfg.QPS and cfg.Burst. Every request, read or write, waits on it,
// as on a client-go clientset.
func New(cfg wire.Config, opts Options) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	httpClient := opts.HTTPClient
	if httpClient == nil {
		var err error
		if httpClient, err = wire.NewHTTPClient(cfg); err != nil {
			return nil, err
		}
	}
	next := httpClient.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	// The informers' authentication (rotation, exec plugins, credentials
	// only to cfg.Host), on a copy of the client so that the caller's is
	// left as it was.
	authed, err := wire.NewAuthRoundTripper(cfg, next)
	if err != nil {
		return nil, err
	}
	// Never follow a redirect, on the caller's client too (a copy of it).
	hc := wire.WithoutRedirects(httpClient)
	hc.Transport = authed
	if opts.Scheme == nil {
		opts.Scheme = apiresource.NewScheme()
	}
	c := &Client{
		cfg: cfg.WithDefaults(), http: hc, scheme: opts.Scheme, codecs: serializer.NewCodecFactory(opts.Scheme),
		resources: opts.Resources, limiter: cfg.RateLimiter, metrics: opts.Metrics,
	}
	if c.limiter == nil {
		c.limiter = wire.NewRateLimiter(cfg)
	}
	return c, nil
}

// request is one call to the server, before it is sent.
type request struct {
	method      string
	res         informer.Resource
	namespace   string
	name        string
	subresource string
	query       url.Values
	body        []byte
	contentType string
	protobuf    bool // the type has a protobuf form: it may be asked for
}

// url is where r goes: the collection or the object, laid out by
// wire.ResourceURL as for the informers' lists. A namespace given for a
// cluster-scoped kind is dropped.
func (c *Client) url(r request) string {
	ns := r.namespace
	if r.res.ClusterScoped {
		ns = ""
	}
	u := wire.ResourceURL(c.cfg.Host, r.res.GVR(), ns, r.name, r.subresource)
	u.RawQuery = r.query.Encode()
	return u.String()
}

// do sends r and decodes a 2xx answer into into (unless into is nil). Every
// other answer becomes an error: an *apierrors.StatusError, or an
// *UnservedError for a 404 on the resource itself.
func (c *Client) do(ctx context.Context, verb string, r request, into runtime.Object) error {
	if c.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.Timeout)
		defer cancel()
	}
	if c.limiter != nil {
		if err := c.limiter.Wait(ctx); err != nil {
			return fmt.Errorf("client: %s %s: waiting for the client rate limit: %w", verb, r.res.Plural, err)
		}
	}
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, c.url(r), body)
	if err != nil {
		return fmt.Errorf("client: building request: %w", err)
	}
	req.Header.Set("Accept", wire.AcceptHeader(c.cfg.ContentType, r.protobuf))
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	start := time.Now()
	resp, err := c.http.Do(req)
	c.metrics.RecordRequest(req, resp, err, time.Since(start))
	if err != nil {
		return fmt.Errorf("client: %s %s: %w", verb, r.res.Plural, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return c.errorFor(resp, verb, r)
	}
	if into == nil {
		return nil
	}
	data, err := wire.ReadBody(resp, c.cfg.MaxObjectBytes)
	if errors.Is(err, wire.ErrObjectTooLarge) {
		err = fmt.Errorf("%w: %w", ErrMalformedResponse, err)
	}
	if err != nil {
		return fmt.Errorf("client: %s %s: %w", verb, r.res.Plural, err)
	}
	if err := c.decode(resp.Header.Get("Content-Type"), data, into, r.res); err != nil {
		return fmt.Errorf("client: %s %s: HTTP %d: %w", verb, r.res.Plural, resp.StatusCode, err)
	}
	return nil
}

// errorFor turns a non-2xx response into the caller's error.
func (c *Client) errorFor(resp *http.Response, verb string, r request) error {
	err := wire.ErrorFromResponse(c.cfg, resp, verb, r.res.GVR().GroupResource())
	if resp.StatusCode == http.StatusConflict && r.contentType == string(types.ApplyPatchType) {
		return applyConflict(err)
	}
	if resp.StatusCode != http.StatusNotFound {
		return err
	}
	// A missing object's NotFound names the object; a missing resource's
	// (an unknown path) names nothing.
	if status, ok := err.(apierrors.APIStatus); ok {
		if d := status.Status().Details; d == nil || d.Name == "" {
			return &UnservedError{Resource: r.res.GVR(), Err: err}
		}
	}
	return err
}

// newObject makes a fresh zero value of the pointer type T.
func newObject[T runtime.Object]() (T, error) {
	var zero T
	t := reflect.TypeOf(zero)
	if t == nil || t.Kind() != reflect.Pointer {
		return zero, fmt.Errorf("client: %v is not a pointer to a struct: %w", t, ErrUnknownType)
	}
	obj, ok := reflect.New(t.Elem()).Interface().(T)
	if !ok {
		return zero, fmt.Errorf("client: %v: %w", t, ErrUnknownType)
	}
	return obj, nil
}
