// Package wire is the HTTP client side of the informer pipeline: it lists and
// watches one Kubernetes resource over the real API protocol and hands typed
// objects to the reflector.
//
//	API server ──HTTP──▶ wire.ListerWatcher ──objects──▶ reflector ──▶ DeltaFIFO ──▶ indexer
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
// Content-Type says which one the server chose.
//
// # Encodings
//
// The server speaks JSON for everything and protobuf for built-in types.
// Protobuf is several times cheaper to decode, so with Config.ContentType
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
// Frames are bounded (Config.MaxFrameBytes). A frame that is too large or
// malformed ends the watch with a final watch.Error event and a *FrameError
// from (*Watcher).Err; a stream cut inside a frame just ends, because that is
// what a restarting server looks like and the cure is the same: watch again
// from the last resourceVersion. The table on Watcher lists every ending.
//
// # Errors
//
// Non-2xx responses become *apierrors.StatusError built from the server's
// metav1.Status body (or from the HTTP code when there is none), so
// apierrors.IsResourceExpired, IsGone, IsTooManyRequests and
// SuggestsClientDelay (Retry-After) work as with client-go. Connection
// failures keep the transport's error in their chain (errors.As to
// *net.OpError, errors.Is to syscall.ECONNREFUSED). The package's own
// sentinel errors are listed in errors.go.
//
// # Objects
//
// Every decoded object carries its apiVersion and kind, list items included
// (client-go strips them from typed objects). A watch event whose object is
// of another kind than the one watched is delivered with a *runtime.Unknown
// naming that kind, never as a half-filled object of the watched type, so
// the reflector can report and skip it.
//
// # Configuration
//
// Config holds the server address and credentials (bearer token or token
// file, client certificate, CA bundle). LoadKubeconfig fills it from a
// kubeconfig file's current context; kubeconfig.go lists what it does not
// support (exec plugins, auth providers, basic auth, impersonation, proxies,
// multi-file KUBECONFIG).
//
// # Statistics
//
// *Watcher and *ListerWatcher both have BytesDecoded() int64, the optional
// interface reflectors look for: the watch counts its own stream, the
// ListerWatcher counts its lists plus all its watches.
package wire
