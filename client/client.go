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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/discovery"
	"github.com/seed31a95821/informer/rest"
)

var errUnknownType = informer.ErrUnknownType

// Options configure a Client. The zero value is ready to use.
type Options struct {
	// Scheme maps Go types to kinds and encodes them. Nil means
	// apiresource.NewScheme(): pass the factory's scheme when you registered
	// types of your own.
	Scheme *runtime.Scheme
	// Resources override where a kind lives, whatever the server's
	// discovery says, as FactoryOptions.Resources does: pass the same list.
	Resources []informer.Resource
}

// Client writes (and reads, when a read must be fresh) any registered type
// through one API server. It is safe for concurrent use.
type Client struct {
	rc       *rest.Client
	cfg      rest.Config // rc.Config(): with its defaults
	scheme   *runtime.Scheme
	codecs   serializer.CodecFactory
	resolver discovery.Resolver // Options.Resources, then discovery through rc
}

// CloseIdleConnections closes the keep-alive connections the client's
// requests left open, and the goroutines that serve them, which would
// otherwise stay until the server drops them or 90 s pass. Call it when you
// are done with the client; connections in use are left alone.
func (c *Client) CloseIdleConnections() { c.rc.CloseIdleConnections() }

// New returns a client for the API server cfg describes: the same
// rest.Config the informers use, with its TLS settings, credentials (bearer
// token, token file, client certificate, exec plugin), ContentType,
// MaxObjectBytes, Timeout, client-side rate limit and Metrics, all applied
// by one rest.Client (rest.New). Share a rate budget and connections with
// your informers by putting the same RateLimiter and HTTPClient in both
// Configs. Every request, read or write, waits on the limit, as on a
// client-go clientset.
func New(cfg rest.Config, opts Options) (*Client, error) {
	rc, err := rest.New(cfg)
	if err != nil {
		return nil, err
	}
	if opts.Scheme == nil {
		opts.Scheme = apiresource.NewScheme()
	}
	return &Client{
		rc: rc, cfg: rc.Config(), scheme: opts.Scheme, codecs: serializer.NewCodecFactory(opts.Scheme),
		resolver: discovery.Resolver{Overrides: opts.Resources, Discovery: discovery.New(rc, discovery.Options{})},
	}, nil
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
// rest.Client.URL as for the informers' lists. A namespace given for a
// cluster-scoped kind is dropped.
func (c *Client) url(r request) string {
	ns := r.namespace
	if r.res.ClusterScoped {
		ns = ""
	}
	u := c.rc.URL(r.res.GVR(), ns, r.name, r.subresource)
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
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, c.url(r), body)
	if err != nil {
		return fmt.Errorf("client: building request: %w", err)
	}
	req.Header.Set("Accept", rest.AcceptHeader(c.cfg.ContentType, r.protobuf))
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	resp, err := c.rc.Do(req)
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
	data, err := rest.ReadBody(resp, c.cfg.MaxObjectBytes)
	if errors.Is(err, rest.ErrObjectTooLarge) {
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
	err := c.rc.Error(resp, verb, r.res.GVR().GroupResource())
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
