package wire

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
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
	// Unstructured decodes into *unstructured.Unstructured(List) instead of
	// a Go type of Scheme: any resource can be watched, given its kind
	// (which every object is checked against, as in the typed mode).
	// Integers keep their integer type (int64), as apimachinery's
	// unstructured decoding does. The server is asked for JSON, or, when
	// the rest.Config's ContentType is rest.ContentTypeCBOR, for CBOR
	// first (unstructured_cbor.go).
	Unstructured bool
	// ShareValues lets the unstructured objects decoded from JSON share
	// their equal small maps and slices with each other (a condition, a
	// port list, a managedFields entry), as well as their strings: a cache
	// of similar objects then holds each such part once. Set it only when
	// nobody modifies a decoded object in place; an informer's factory
	// sets it when the informer's Transform is none or StripManagedFields.
	ShareValues bool

	// NoWatchList declares that the server does not implement WatchList
	// (sendInitialEvents=true, KEP-3157; kube-apiserver enables it by
	// default since 1.32). A reflector then lists instead of first trying
	// a WatchList that would never send its end-of-initial-events bookmark.
	NoWatchList bool

	// Relist, when set, is the cache this ListerWatcher's objects go to,
	// as a relist sees it (see RelistCache): a List or a WatchList then
	// hands on the object the cache holds for every item it holds
	// unchanged, instead of a second, freshly decoded copy, so that a
	// relist does not double the process's memory while it runs. An
	// informer Factory sets it to the informer's cache.
	Relist RelistCache
	// Decoded, when set, is run on every object a List or a Watch hands
	// on, as soon as it is decoded: each list item and each added or
	// modified object, except those Relist found unchanged (they were
	// handed on before). Nothing else holds the object yet. An informer
	// Factory sets it to share equal maps and byte slices between the
	// objects of its cache, when the informer's Transform leaves them
	// alone.
	Decoded func(runtime.Object)
	// ShareParts promises that nothing modifies a decoded object at all,
	// not even a field of it: the protobuf and JSON decoders then let pods
	// share the repeated parts they decode once (containers, volumes,
	// affinity...: protobuf_parts.go, json_parts.go). An informer Factory
	// sets it when the informer's Transform is none or StripManagedFields,
	// never for a Transform of the user's, which may set a field inside a
	// shared part.
	ShareParts bool
	// PodParts, with ShareParts, is where the protobuf decoder looks for
	// a pod's repeated parts that its own cache has forgotten, by the
	// bytes the server sent of them, instead of decoding them
	// (protobuf_parts.go). An informer Factory sets it to the table its
	// informer shares values in.
	PodParts PodParts
	// DropManagedFields declares that the caller drops every object's
	// metadata.managedFields (an informer Factory sets it when the
	// Transform declares DropsManagedFields, as StripManagedFields does):
	// the decoders then skip them instead of decoding them only to be
	// dropped. Objects are delivered without managedFields.
	DropManagedFields bool
}

// PodParts finds a pod's repeated parts (its containers, volumes,
// labels, ...) among the values a cache already keeps, by the bytes the
// server sent of them, so that a decoder need not decode them again. It
// is an optimisation only: an implementation that never finds anything
// leaves every decoded pod as it was.
type PodParts interface {
	// FindPodPart sets the field of pod that path names (the field
	// numbers from the Pod message down: {2, 2} is spec.containers, {1,
	// 11} metadata.labels) to a kept value whose protobuf bytes are raw,
	// the field's occurrences in its parent message, keys included, as the
	// generated Marshal writes them. It reports whether it did; pod is
	// unchanged otherwise, and must then never be modified: it shares the
	// part with other objects.
	FindPodPart(path [2]int32, raw []byte, pod *corev1.Pod) bool
	// FindBytes returns a kept byte slice equal to raw (a managedFields
	// entry's fieldsV1), or nil. The pod that takes it shares it and must
	// never be modified.
	FindBytes(raw []byte) []byte
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
	tgt, err := targetFor(opts, res.Kind)
	if err != nil {
		return nil, err
	}
	tgt.strings = &share.Table{Budget: share.StringsBudget}
	if opts.ShareParts {
		tgt.parts = opts.PodParts
	}
	if opts.DropManagedFields {
		tgt.dropManagedFields = true
		tgt.jsonSkip = newJSONSkip(tgt.itemType, tgt.listType)
	}
	if cfg.ContentType == rest.ContentTypeProtobuf && !tgt.protobuf {
		return nil, &rest.ConfigError{Field: "ContentType", Reason: fmt.Sprintf("%s has no protobuf form", tgt.itemGVK.Kind)}
	}
	lw := &ListerWatcher{rc: rc, cfg: cfg, res: res, gvr: gvr, opts: opts, target: tgt}
	lw.baseURL = rc.URL(gvr, opts.Namespace)
	lw.acceptList, lw.acceptWatch = acceptHeaders(cfg.ContentType, tgt.protobuf, opts.MetadataOnly)
	if opts.Unstructured && cfg.ContentType == rest.ContentTypeCBOR {
		lw.acceptList, lw.acceptWatch = cborAccept, cborAccept // unstructured_cbor.go
	}
	return lw, nil
}

// targetFor picks what the ListerWatcher decodes into: metadata, an
// unstructured object, or the scheme's Go type for kind.
func targetFor(opts Options, kind schema.GroupVersionKind) (*target, error) {
	switch {
	case opts.Unstructured && opts.MetadataOnly:
		return nil, &rest.ConfigError{Field: "Unstructured", Reason: "and MetadataOnly exclude each other"}
	case opts.Unstructured:
		return newUnstructuredTarget(kind, opts.ShareValues), nil
	}
	return newTarget(opts.Scheme, kind, opts.MetadataOnly)
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
	pd := newProtoDecoder(lw.target, lw.shareParts())
	jd := newJSONPartsDecoder(lw.target, lw.shareParts())
	list, hits, err := lw.target.decodeListWith(mediaType, body, pd, jd)
	if err != nil {
		return nil, err
	}
	lw.reuseListItems(opts, list, hits)
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
	switch {
	case mediaType == rest.ContentTypeProtobuf:
		pd := newProtobufEventDecoder(resp.Body, lw.cfg.MaxFrameBytes, lw.target)
		pd.objects = newProtoDecoder(lw.target, lw.shareParts())
		dec = pd
	case mediaType == rest.ContentTypeCBOR && lw.target.isUnstructured():
		if dec, err = newCBOREventDecoder(resp.Body, lw.cfg.MaxFrameBytes, lw.target); err != nil { // unstructured_cbor.go
			cancel()
			resp.Body.Close()
			return nil, err
		}
	case mediaType == rest.ContentTypeCBOR:
		cancel()
		resp.Body.Close()
		return nil, fmt.Errorf("wire: watch %s: %w: CBOR for a typed object", lw.gvr.Resource, rest.ErrUnsupportedMediaType)
	default:
		jd := newJSONEventDecoder(resp.Body, lw.cfg.MaxFrameBytes, lw.target)
		jd.withParts(newJSONPartsDecoder(lw.target, lw.shareParts()))
		dec = jd
	}
	dec = lw.reuseWatch(opts, dec)
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
