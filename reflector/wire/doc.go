// Package wire is the HTTP client side of the informer pipeline: it lists and
// watches one Kubernetes resource over the real API protocol and hands typed
// objects to the reflector. It speaks the list/watch protocol only:
// connecting (transport, credentials, rate limit, redirects, error
// answers) is package rest's, and a ListerWatcher sends every request
// through the *rest.Client it is built on, shared with the other
// ListerWatchers of a factory and with package client.
//
//	API server ──HTTP──▶ rest.Client ──▶ wire.ListerWatcher ──objects──▶ reflector ──▶ DeltaFIFO ──▶ indexer
//
// What it lists is named by one apiresource.Resource (kind, plural, scope),
// resolved by the caller (a factory, from its scheme and overrides): the
// plural places it on the server, the kind picks the Go type to decode
// into. No kind is ever guessed back from a plural.
//
// The reflector only needs two verbs (reflector.ListerWatcher): List returns
// one page of a resource as a typed list; Watch returns a stream of events
// after a resourceVersion. This package implements both with net/http and
// apimachinery's types, and nothing else: no client-go.
//
// # Requests
//
// A request is a GET on the resource's collection path:
//
//	/api/v1/namespaces/default/pods?limit=500&resourceVersion=0            (core group)
//	/apis/apps/v1/deployments?watch=true&allowWatchBookmarks=true          (other groups)
//
// metav1.ListOptions becomes the query string through apimachinery's own
// parameter codec, the same conversion the API server reads it back with.
// The Accept header states which encodings we can decode; the response's
// Content-Type says which one the server chose. The URL layout
// (rest.Client.URL), the Accept header (rest.AcceptHeader), bounded body
// reading (rest.ReadBody) and the media types are package rest's, shared
// with package client's writes, so that both sides build requests one way.
//
// # Encodings
//
// The server speaks JSON for everything and protobuf for built-in types.
// Protobuf is several times cheaper to decode, so with rest.Config.ContentType
// left empty we ask for protobuf first whenever the Go type has a protobuf
// form (every generated Kubernetes type does) and fall back to JSON.
//
// # Decoding a watch once
//
// A watch stream is a sequence of frames, each holding one
// {type, object} event. client-go decodes each frame twice: into a generic
// event whose object is kept as raw bytes, and then those bytes again into
// the typed object. watch_decoder.go goes from frame to typed object in one
// pass, for both encodings; watch_decoder_bench_test.go measures how close
// that gets to the cost of decoding the bare object.
//
// "One pass" is the rule for an ordinary event of the watched kind. The
// exceptions:
//
//   - JSON whose "object" comes before "type" (legal; the API server writes
//     "type" first): the object's bytes are kept and decoded once the type
//     is known, a second pass over them.
//   - JSON of another kind than expected: decoded into the expected type,
//     then handed on as a *runtime.Unknown without its bytes. In protobuf
//     the envelope names the kind first, so such an object is not decoded
//     at all; its bytes are copied into the *runtime.Unknown.
//   - A relist's WatchList with Options.Relist set (relist_reuse.go): in
//     protobuf, each ADDED object's identity (name, namespace, uid,
//     resourceVersion) is peeked first, and an object the cache holds
//     unchanged is not decoded at all (the cached one is handed on); the
//     others are then decoded in full, reading their metadata twice. In
//     JSON every object is decoded, and one held unchanged is then replaced
//     by the cached one. List pages are decoded whole, then reused alike.
//   - Metadata-only watches (PartialObjectMetadata) follow the same paths,
//     into the smaller type.
//   - A JSON watch of pods whose parts are shared (Options.ShareParts)
//     reads each frame whole, its end found by counting brackets, so that
//     a pod's parts can be cut out of its bytes before encoding/json
//     decodes the rest (json_frames.go, json_parts.go); its managedFields
//     are cut out too and read by hand when they have the API server's
//     shape (json_managed_fields_decode.go). A frame of any other shape,
//     and every frame after it, goes through the json.Decoder as above.
//
// Frames are bounded (rest.Config.MaxFrameBytes). A frame that is too large or
// malformed ends the watch with a final watch.Error event and a *FrameError
// from (*Watcher).Err; our reflector then relists, to get past it, since a
// watch from the same resourceVersion would meet it again. A body that does
// not decode, JSON or protobuf, list or watch frame, wraps
// reflector.ErrDecode (ErrMalformedObject, ErrMalformedFrame): one failure
// in the reflector's one taxonomy, KindDecode. A stream cut inside a frame
// is not a normal close: (*Watcher).Err is a *FrameError of
// ErrTruncatedFrame, which the reflector files as KindNetwork and backs off
// from before it watches again from the last resourceVersion.
// The table on Watcher lists every ending.
//
// A watch's goroutine decodes the frames and sends the events on the
// Watcher's channel. One event at a time, as a live watch brings them,
// each is sent as soon as it is decoded. A protobuf watch reads through a
// buffer of its own (32 KiB, several pods' frames), and while the next
// frame is already in it whole (a backlog being drained, a WatchList's
// initial events), the goroutine decodes it too, up to aheadMax events,
// and sends them in a row: the reflector is woken once for the lot
// instead of once per event (watch_batch.go, which a first reading can
// skip).
//
// # Errors
//
// Non-2xx responses become the errors rest.Client.Error builds:
// *apierrors.StatusError from the server's metav1.Status body, so
// apierrors.IsResourceExpired, IsGone, IsTooManyRequests and
// SuggestsClientDelay work as with client-go, or a *rest.RedirectError.
// Connection failures keep the transport's error in their chain. The
// package's own sentinel errors (decoding, frames, kinds) are listed in
// errors.go.
//
// # Objects
//
// Every decoded object carries its apiVersion and kind, list items included
// (client-go strips them from typed objects). A watch event whose object is
// of another kind than the one watched is delivered with a *runtime.Unknown
// naming that kind, never as a half-filled object of the watched type, so
// the reflector can report and skip it.
//
// # Memory
//
// Decoded objects share the strings that repeat across them (namespaces,
// labels, images, node names...): an internal/share table per
// ListerWatcher keeps one copy of each, within a budget (its doc.go says
// why that is safe and how it is bounded). Given the cache its objects go to
// (Options.Relist, which an informer's Factory sets), a list or a
// WatchList also hands on the cached object for every unchanged item
// (relist_reuse.go). When the caller also promises never to modify what
// it is given (Options.Decoded, set when the informer's Transform is none
// or leaves maps alone), a protobuf or JSON decoder decodes each of a
// pod's repeated parts (containers, volumes, tolerations, labels, owner
// references...) once per watch stream or list page and hands the same
// value to every pod that repeats its bytes (protobuf_parts.go,
// json_parts.go). The protobuf decoder also takes a pod's repeated
// strings and its controller's managedFields document from the
// informer's tables by their bytes instead of making copies to drop
// (protobuf_strings.go), and sizes the lists it decodes before filling
// them, never by more than a bound (protobuf_presize.go).
// Unstructured objects share their keys and short strings through a table
// per list or watch stream, and, with Options.ShareValues, their equal
// small maps and slices (unstructured_json.go). All are optimisations;
// deleting them changes nothing but memory and time.
//
// # Skipping managedFields
//
// With Options.DropManagedFields (set by the informer's factory when the
// Transform declares DropsManagedFields, as StripManagedFields does)
// objects are delivered without metadata.managedFields, and the decoders
// do not decode them at all: in protobuf their bytes are stepped over
// (protobuf_split.go), in JSON encoding/json reads past them into a type
// that ignores them (json_managed_fields.go).
//
// # A server is not trusted
//
// Everything a server sends is bounded: a watch frame by MaxFrameBytes, a
// list body by MaxObjectBytes (rest.ReadBody), a list page's items by the
// reflector's cap, counted before decoding (ListAtMost), and the items the
// decoders make before decoding them by the page's bytes (one per 256:
// itemsBeforeDecoding), so that a page of tiny items with a bad one fails
// before a kilobyte is spent on each (a JSON item of a wrong type fails the
// page at once: itemTypeError). The transport's
// own defences (no redirect followed, tokens redacted, response-header
// timeout, rate limit, bounded files) are package rest's; see its doc.
//
// # Limits, deliberately
//
//   - Typed objects are decoded only into Go types known to a scheme (plus
//     PartialObjectMetadata for any resource). Options.Unstructured
//     decodes any resource into *unstructured.Unstructured instead: JSON
//     in one pass (unstructured_json.go), or CBOR where the server serves
//     it and rest.Config.ContentType is rest.ContentTypeCBOR
//     (unstructured_cbor.go, apimachinery's decoding). A custom resource
//     has no protobuf form; typed objects are never decoded from CBOR.
//   - A CBOR watch frame nested deeper than 32 levels is refused as
//     malformed: apimachinery's CBOR framer, which finds the frame's end,
//     checks it with its library's default limits.
//   - JSON is decoded with encoding/json, which matches keys without regard
//     to case where the API server's decoder is case-sensitive. Servers never
//     send differently cased keys, so only hand-written input can tell.
//     Faster decoders were measured against Kubernetes' rules
//     (docs/perf-log.md, issue 33); encoding/json/v2 keeps them, and waits
//     for a toolchain that offers it without GOEXPERIMENT.
//   - The JSON watch decoder's read buffer grows to the largest frame seen
//     (at most MaxFrameBytes) and keeps that size for the life of the watch;
//     the protobuf decoder, and the JSON one while it reads frames whole
//     (json_frames.go), give back buffers above 1 MiB after each frame.
//   - In MetadataOnly mode the kind of each object is not checked: every
//     Kubernetes object decodes into PartialObjectMetadata.
//
// # Optional methods for the reflector
//
// *ListerWatcher has the reflector's optional methods BytesDecoded (lists and
// watches together), SupportsWatchList (true unless Options.NoWatchList)
// and ListAtMost (a page's items counted in its raw bytes, and refused
// past the reflector's MaxListItems before any is decoded); *Watcher has
// its optional Err (why the stream ended) and its own BytesDecoded.
//
// # Statistics
//
// BytesDecoded counts the response bytes handed to the decoders: a list's
// body, a watch's frames. The watch counts its own stream, the
// ListerWatcher its lists plus all its watches, so add up one or the other,
// never both.
package wire
