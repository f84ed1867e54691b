package wire

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/internal/share"
	"github.com/seed31a95821/informer/rest"
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

	// Scheme maps the resource's kind to Go types. Default:
	// apiresource.NewScheme() (meta/v1, core/v1, apps/v1, autoscaling/v1).
	Scheme *runtime.Scheme
	// MetadataOnly asks the server for PartialObjectMetadata instead of
	// whole objects, and decodes into *metav1.PartialObjectMetadata(List).
	// It works for any resource, including ones Scheme does not know.
	MetadataOnly bool

	// NoWatchList declares that the server does not implement WatchList
	// (sendInitialEvents=true, KEP-3157; kube-apiserver enables it by
	// default since 1.32). A reflector then lists instead of first trying
	// a WatchList that would never send its end-of-initial-events bookmark.
	NoWatchList bool
}

// ListerWatcher lists and watches one resource of one API server over HTTP.
// It implements reflector.ListerWatcher.
//
// A ListerWatcher is safe for concurrent use.
type ListerWatcher struct {
	rc          *rest.Client
	cfg         rest.Config // rc.Config(): the limits and the encoding
	res         apiresource.Resource
	gvr         schema.GroupVersionResource
	opts        Options
	target      *target
	baseURL     *url.URL // Host plus the resource's collection path
	acceptList  string
	acceptWatch string

	bytesDecoded atomic.Int64 // list bytes plus every watch's stream bytes
}

// New builds a ListerWatcher for res, sending its requests through rc
// (whose rate limit, credentials and connections it shares with every
// other user of rc). res names the resource from end to end: its plural
// and scope place it on the server, its kind picks the Go types to decode
// into (unless opts.MetadataOnly). It is the caller's resolution (a
// factory's, from its scheme and its Resources overrides, or discovery's):
// New never guesses a kind back from a plural.
func New(rc *rest.Client, res apiresource.Resource, opts Options) (*ListerWatcher, error) {
	if rc == nil {
		return nil, &rest.ConfigError{Field: "Client", Reason: "is nil"}
	}
	gvr := res.GVR()
	if gvr.Version == "" || gvr.Resource == "" {
		return nil, &rest.ConfigError{Field: "Resource", Reason: fmt.Sprintf("%v needs a version and a plural", gvr)}
	}
	if !opts.MetadataOnly && res.Kind.Kind == "" {
		return nil, &rest.ConfigError{Field: "Resource", Reason: fmt.Sprintf("%v needs a kind", gvr)}
	}
	if res.ClusterScoped {
		opts.Namespace = ""
	}
	cfg := rc.Config()
	if opts.Scheme == nil {
		opts.Scheme = defaultScheme()
	}
	tgt, err := newTarget(opts.Scheme, res.Kind, opts.MetadataOnly)
	if err != nil {
		return nil, err
	}
	tgt.strings = &share.Table{Budget: share.StringsBudget}
	if cfg.ContentType == rest.ContentTypeProtobuf && !tgt.protobuf {
		return nil, &rest.ConfigError{Field: "ContentType", Reason: fmt.Sprintf("%s has no protobuf form", tgt.itemGVK.Kind)}
	}
	lw := &ListerWatcher{rc: rc, cfg: cfg, res: res, gvr: gvr, opts: opts, target: tgt}
	lw.baseURL = rc.URL(gvr, opts.Namespace)
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
	return obj, lw.rc.Redact(err)
}

func (lw *ListerWatcher) list(ctx context.Context, opts metav1.ListOptions, maxItems int) (runtime.Object, error) {
	if lw.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, lw.cfg.Timeout)
		defer cancel()
	}
	opts.Watch = false
	resp, err := lw.do(ctx, "list", opts, lw.acceptList)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := rest.ReadBody(resp, lw.cfg.MaxObjectBytes)
	if err != nil {
		return nil, fmt.Errorf("wire: list %s: %w", lw.gvr.Resource, err)
	}
	lw.bytesDecoded.Add(int64(len(body)))
	mediaType, err := rest.ResponseMediaType(resp.Header.Get("Content-Type"), body)
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
		return nil, lw.rc.Redact(err)
	}
	return w, nil
}

func (lw *ListerWatcher) watch(ctx context.Context, opts metav1.ListOptions) (*Watcher, error) {
	ctx, cancel := context.WithCancel(ctx)
	opts.Watch = true
	resp, err := lw.do(ctx, "watch", opts, lw.acceptWatch)
	if err != nil {
		cancel()
		return nil, err
	}
	mediaType, err := rest.ResponseMediaType(resp.Header.Get("Content-Type"), nil)
	if err != nil {
		cancel()
		resp.Body.Close()
		return nil, err
	}
	var dec eventDecoder
	if mediaType == rest.ContentTypeProtobuf {
		dec = newProtobufEventDecoder(resp.Body, lw.cfg.MaxFrameBytes, lw.target)
	} else {
		dec = newJSONEventDecoder(resp.Body, lw.cfg.MaxFrameBytes, lw.target)
	}
	dec = reuseWatch(ctx, opts, dec)
	return newWatcher(ctx, cancel, resp, dec, &lw.bytesDecoded, lw.rc), nil
}

// CloseIdleConnections closes the connections of the ListerWatcher's HTTP
// client that carry no request: the keep-alive connections a finished list
// or watch left in its pool, and the goroutines that serve them, which
// would otherwise linger until the server drops them or 90s pass. An
// informer calls it when it stops. Connections in use are left alone, so
// it is harmless on a client other ListerWatchers share.
func (lw *ListerWatcher) CloseIdleConnections() { lw.rc.CloseIdleConnections() }

// do sends one GET for verb ("list" or "watch") through the rest.Client,
// and returns the response only when it is a 2xx; every other outcome
// becomes an error (rest.Client.Error).
func (lw *ListerWatcher) do(ctx context.Context, verb string, opts metav1.ListOptions, accept string) (*http.Response, error) {
	req, err := lw.newRequest(ctx, opts, accept)
	if err != nil {
		return nil, err
	}
	resp, err := lw.rc.Do(req)
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
	return nil, lw.rc.Error(resp, verb, lw.gvr.GroupResource())
}

// newRequest builds the GET request: collection URL, ListOptions as query
// parameters, content negotiation. The rest.Client adds the credentials.
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
	return req, nil
}
