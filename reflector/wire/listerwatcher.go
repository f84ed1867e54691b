package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer/metrics"
)

// Options scope a ListerWatcher to part of a resource and say what to decode
// into. The zero value lists and watches every object of the resource, in
// every namespace, decoded into the Go type the default scheme knows for it.
type Options struct {
	// Namespace limits requests to one namespace ("" = all namespaces, or a
	// cluster-scoped resource).
	Namespace string
	// LabelSelector and FieldSelector are sent with every request unless the
	// caller's metav1.ListOptions sets its own.
	LabelSelector, FieldSelector string

	// Scheme maps the resource to Go types. Default: apiresource.NewScheme()
	// (meta/v1, core/v1, apps/v1, autoscaling/v1).
	Scheme *runtime.Scheme
	// Kind names the kind to decode into, e.g. "Pod". Default: found in
	// Scheme from the GVR (the kind whose plural is the resource and which
	// has a List kind).
	Kind string
	// MetadataOnly asks the server for PartialObjectMetadata instead of
	// whole objects, and decodes into *metav1.PartialObjectMetadata(List).
	// It works for any resource, including ones Scheme does not know.
	MetadataOnly bool

	// NoWatchList declares that the server does not implement WatchList
	// (sendInitialEvents=true, KEP-3157; kube-apiserver enables it by
	// default since 1.32). A reflector then lists instead of first trying
	// a WatchList that would never send its end-of-initial-events bookmark.
	NoWatchList bool

	// HTTPClient, when set, is used instead of a client built from Config's
	// TLS fields: pass one NewHTTPClient result to many ListerWatchers to
	// share its connections. Authentication headers are still added from
	// Config, and redirects are not followed even if the client would.
	HTTPClient *http.Client

	// Metrics, when set, receives a count and a latency of every request,
	// under client-go's rest_client_* names (metrics/names.go).
	Metrics *metrics.Registry
}

// ListerWatcher lists and watches one resource of one API server over HTTP.
// It implements reflector.ListerWatcher.
//
// A ListerWatcher is safe for concurrent use.
type ListerWatcher struct {
	cfg         Config
	client      *http.Client
	auth        *authenticator
	limiter     *rate.Limiter // nil: no rate limit
	redact      redactor
	gvr         schema.GroupVersionResource
	opts        Options
	target      *target
	baseURL     *url.URL // Host plus the resource's collection path
	acceptList  string
	acceptWatch string

	bytesDecoded atomic.Int64 // list bytes plus every watch's stream bytes
}

// New builds a ListerWatcher for gvr. It validates cfg, reads the token
// file and certificate files once, and resolves the Go types to decode into.
// Its requests are rate-limited by cfg.RateLimiter, or, when that is nil,
// by a limiter of its own built from cfg.QPS and cfg.Burst.
func New(cfg Config, gvr schema.GroupVersionResource, opts Options) (*ListerWatcher, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if gvr.Version == "" || gvr.Resource == "" {
		return nil, &ConfigError{Field: "GroupVersionResource", Reason: fmt.Sprintf("%v needs a version and a resource", gvr)}
	}
	cfg = cfg.WithDefaults()
	if opts.Scheme == nil {
		opts.Scheme = defaultScheme()
	}
	tgt, err := newTarget(opts.Scheme, gvr, opts.Kind, opts.MetadataOnly)
	if err != nil {
		return nil, err
	}
	tgt.strings = newInternTable()
	if cfg.ContentType == ContentTypeProtobuf && !tgt.protobuf {
		return nil, &ConfigError{Field: "ContentType", Reason: fmt.Sprintf("%s has no protobuf form", tgt.itemGVK.Kind)}
	}
	auth, err := newAuthenticator(cfg)
	if err != nil {
		return nil, err
	}
	client := opts.HTTPClient
	if client == nil {
		if client, err = NewHTTPClient(cfg); err != nil {
			return nil, err
		}
	}
	limiter := cfg.RateLimiter
	if limiter == nil {
		limiter = NewRateLimiter(cfg)
	}
	lw := &ListerWatcher{
		cfg: cfg, client: WithoutRedirects(client), auth: auth, limiter: limiter,
		redact: redactor{auth: auth}, gvr: gvr, opts: opts, target: tgt,
	}
	lw.baseURL = ResourceURL(cfg.Host, gvr, opts.Namespace)
	lw.acceptList, lw.acceptWatch = acceptHeaders(cfg.ContentType, tgt.protobuf, opts.MetadataOnly)
	return lw, nil
}

// SupportsWatchList reports whether the reflector may try WatchList with
// this ListerWatcher: true unless Options.NoWatchList. It is an optional
// method the reflector looks for (see reflector/capabilities.go).
func (lw *ListerWatcher) SupportsWatchList() bool { return !lw.opts.NoWatchList }

// Scope returns the namespace and the selectors this ListerWatcher sends
// with its requests (Options). It is an optional method the reflector
// looks for (see reflector/capabilities.go): it refuses any object the
// server sends outside them, so that a server that ignores them cannot
// fill the cache with what was not asked for.
func (lw *ListerWatcher) Scope() (namespace, labelSelector, fieldSelector string) {
	return lw.opts.Namespace, lw.opts.LabelSelector, lw.opts.FieldSelector
}

// BytesDecoded returns the bytes decoded so far by every List and Watch of
// this ListerWatcher (each Watcher also counts its own stream).
func (lw *ListerWatcher) BytesDecoded() int64 { return lw.bytesDecoded.Load() }

// List fetches one page of the resource. opts is sent as query parameters
// (resourceVersion, resourceVersionMatch, limit, continue, selectors...).
// The result is a *<Kind>List (or *metav1.PartialObjectMetadataList) whose
// list and items carry their apiVersion and kind.
func (lw *ListerWatcher) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	return lw.ListAtMost(ctx, opts, math.MaxInt)
}

// ListAtMost is List for a page of at most maxItems items: a page with
// more is refused with an error wrapping ErrTooManyItems, counted in the
// raw body before any item is decoded (list_item_count.go). It is an
// optional method the reflector looks for (see reflector/capabilities.go),
// passing the room left under its MaxListItems, so that a page of millions
// of empty items costs its bytes, not gigabytes of decoded objects.
func (lw *ListerWatcher) ListAtMost(ctx context.Context, opts metav1.ListOptions, maxItems int) (runtime.Object, error) {
	obj, err := lw.list(ctx, opts, maxItems)
	return obj, lw.redact.err(err)
}

func (lw *ListerWatcher) list(ctx context.Context, opts metav1.ListOptions, maxItems int) (runtime.Object, error) {
	if lw.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, lw.cfg.Timeout)
		defer cancel()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	opts.Watch = false
	resp, err := lw.do(ctx, cancel, "list", opts, lw.acceptList)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := ReadBody(resp, lw.cfg.MaxObjectBytes)
	if err != nil {
		return nil, fmt.Errorf("wire: list %s: %w", lw.gvr.Resource, err)
	}
	lw.bytesDecoded.Add(int64(len(body)))
	mediaType, err := ResponseMediaType(resp.Header.Get("Content-Type"), body)
	if err != nil {
		return nil, err
	}
	if err := checkItemCount(mediaType, body, maxItems); err != nil {
		return nil, fmt.Errorf("wire: list %s: %w", lw.gvr.Resource, err)
	}
	list, err := lw.target.decodeList(mediaType, body)
	if err != nil {
		return nil, err
	}
	reuseListItems(ctx, opts, list)
	return list, nil
}

// Watch opens a watch stream (opts.Watch is forced to true). It returns once
// the server has answered with its headers; a non-2xx answer is returned as
// an *apierrors.StatusError. The returned *Watcher ends as described on its
// type; ctx ends it too.
func (lw *ListerWatcher) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := lw.watch(ctx, opts)
	if err != nil {
		return nil, lw.redact.err(err)
	}
	return w, nil
}

func (lw *ListerWatcher) watch(ctx context.Context, opts metav1.ListOptions) (*Watcher, error) {
	ctx, cancelCause := context.WithCancelCause(ctx)
	cancel := func() { cancelCause(nil) }
	opts.Watch = true
	resp, err := lw.do(ctx, cancelCause, "watch", opts, lw.acceptWatch)
	if err != nil {
		cancel()
		return nil, err
	}
	mediaType, err := ResponseMediaType(resp.Header.Get("Content-Type"), nil)
	if err != nil {
		cancel()
		resp.Body.Close()
		return nil, err
	}
	var dec eventDecoder
	if mediaType == ContentTypeProtobuf {
		dec = newProtobufEventDecoder(resp.Body, lw.cfg.MaxFrameBytes, lw.target)
	} else {
		dec = newJSONEventDecoder(resp.Body, lw.cfg.MaxFrameBytes, lw.target)
	}
	dec = reuseWatch(ctx, opts, dec)
	return newWatcher(ctx, cancel, resp, dec, &lw.bytesDecoded, lw.redact), nil
}

// CloseIdleConnections closes the connections of the ListerWatcher's HTTP
// client that carry no request: the keep-alive connections a finished list
// or watch left in its pool, and the goroutines that serve them, which
// would otherwise linger until the server drops them or 90s pass. An
// informer calls it when it stops. Connections in use are left alone, so
// it is harmless on a client other ListerWatchers share.
func (lw *ListerWatcher) CloseIdleConnections() { lw.client.CloseIdleConnections() }

// do sends one GET for verb ("list" or "watch"), and returns the response
// only when it is a 2xx; every other outcome becomes an error. cancel
// cancels ctx, which the response's body lives in: do uses it to abandon a
// request whose headers do not come within ResponseHeaderTimeout.
func (lw *ListerWatcher) do(ctx context.Context, cancel context.CancelCauseFunc, verb string, opts metav1.ListOptions, accept string) (*http.Response, error) {
	if lw.limiter != nil {
		if err := lw.limiter.Wait(ctx); err != nil {
			return nil, fmt.Errorf("wire: %s %s: waiting for the client rate limit: %w", verb, lw.gvr.Resource, err)
		}
	}
	req, err := lw.newRequest(ctx, opts, accept)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	resp, err := lw.send(ctx, cancel, req)
	lw.opts.Metrics.RecordRequest(req, resp, err, time.Since(start))
	if err != nil {
		// *url.Error wraps *net.OpError wraps the syscall error: %w keeps
		// errors.As(err, **net.OpError) and errors.Is(err, ECONNREFUSED)
		// working for the caller.
		return nil, fmt.Errorf("wire: %s %s: %w", verb, lw.gvr.Resource, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return resp, nil
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		loc := lw.redact.redact(resp.Header.Get("Location"))
		return nil, &RedirectError{Verb: verb, Resource: lw.gvr.Resource, Code: resp.StatusCode, Location: loc}
	}
	if resp.StatusCode == http.StatusUnauthorized {
		lw.auth.unauthorized(req.Header.Get("Authorization")) // a newer token may be on disk or from the plugin
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBodyBytes))
	return nil, errorFromResponse(resp, body, verb, lw.gvr.GroupResource(), lw.redact)
}

// send sends req, abandoning it (by cancelling its context) if the
// response headers do not come within ResponseHeaderTimeout.
func (lw *ListerWatcher) send(ctx context.Context, cancel context.CancelCauseFunc, req *http.Request) (*http.Response, error) {
	d := lw.cfg.ResponseHeaderTimeout
	if d < 0 {
		return lw.client.Do(req)
	}
	timer := time.AfterFunc(d, func() { cancel(ErrResponseHeaderTimeout) })
	resp, err := lw.client.Do(req)
	if timer.Stop() {
		return resp, err
	}
	// The timer fired: the context is cancelled, even if the headers made
	// it just in time, and the body with it.
	if err == nil {
		resp.Body.Close()
		// Never (nil, nil): whatever cancelled the context first (the
		// caller, Timeout, or the timer) is the error.
		err = context.Cause(ctx)
	}
	if errors.Is(context.Cause(ctx), ErrResponseHeaderTimeout) {
		return nil, fmt.Errorf("%w (%v): %w", ErrResponseHeaderTimeout, d, err)
	}
	return nil, err
}

// newRequest builds the GET request: collection URL, ListOptions as query
// parameters, content negotiation and authentication headers.
func (lw *ListerWatcher) newRequest(ctx context.Context, opts metav1.ListOptions, accept string) (*http.Request, error) {
	if opts.LabelSelector == "" {
		opts.LabelSelector = lw.opts.LabelSelector
	}
	if opts.FieldSelector == "" {
		opts.FieldSelector = lw.opts.FieldSelector
	}
	// metav1.ParameterCodec is apimachinery's own ListOptions <-> query
	// conversion, the same one the API server decodes with: every field,
	// including pointers such as sendInitialEvents, round-trips exactly.
	query, err := metav1.ParameterCodec.EncodeParameters(&opts, metav1.SchemeGroupVersion)
	if err != nil {
		return nil, fmt.Errorf("wire: encoding list options: %w", err)
	}
	u := *lw.baseURL
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("wire: building request: %w", err)
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", lw.cfg.UserAgent)
	if err := lw.auth.authorize(req); err != nil {
		return nil, fmt.Errorf("wire: %s credentials: %w", lw.gvr.Resource, err)
	}
	return req, nil
}
