// Package informer keeps an in-memory copy of Kubernetes objects current
// with one watch per resource, and tells your code about every change.
//
// # Why an informer
//
// A controller that calls List in a loop costs the API server a full read
// and serialisation on every call. A watch costs one request: the server
// streams a small event each time an object changes. But a raw watch breaks,
// needs a resume point, and says what changed without saying what exists. An
// informer wraps it: it takes one snapshot (by default a WatchList, which
// streams the current state and then carries on as the watch; a List where
// the server has no WatchList), watches from the snapshot's resourceVersion,
// resumes after every break, and keeps a cache that answers reads with no
// network at all.
//
// # The pipeline
//
// One SharedInformer wires five parts, each its own package:
//
//	API server --HTTP--> reflector --> deltafifo --> indexer   (the cache; lister reads it)
//	                                        \------> processor --> your handlers
//
// Each part has one job:
//
//   - reflector takes a snapshot (WatchList or List), then watches, and
//     resumes from the last resourceVersion after any break; it relists only
//     when a watch cannot go on from where it is (410 is the common case;
//     reflector/transitions.go has the rule). reflector/wire is its HTTP
//     client.
//   - deltafifo queues what changed, per object, in order.
//   - indexer is the cache, with secondary indexes; lister is its typed,
//     read-only face.
//   - processor fans each change out to every handler, each on its own
//     goroutine, so a slow one delays only itself.
//
// A Factory hands out one informer per resource type, so ten parts of a
// program watching pods still make one watch.
//
// # Rules of the road
//
//   - Wait for the cache to sync before reading: an unsynced lister answers
//     "not found" for objects that exist (Factory.WaitForCacheSync).
//   - Never modify an object you got from a handler, a lister or the
//     indexer: it is shared by every reader. DeepCopy, then write through the
//     API server (package client).
//   - Handlers should only enqueue keys (EnqueueKeys, package workqueue);
//     workers read the lister and do the work. docs/controller.md builds a
//     whole controller this way.
//   - A resync re-delivers the cache to handlers; it does not re-read the
//     server.
//   - A factory's namespace and selectors filter on the server: its listers
//     see only what matches.
//
// # Custom resources without Go types
//
// ForDynamic watches any resource, a CRD's included, as
// *unstructured.Unstructured: the kind and scope come from
// FactoryOptions.Resources or from the server's discovery, and the
// informer is in every other way a typed one (lister, indexes, transform,
// handlers). client.ForDynamic writes the same objects. A CRD deleted
// while its informer runs is reported once (reflector.KindNotServed), and
// its informer carries on when the CRD is created again. ExampleForDynamic
// walks it from CRD to cache.
//
// # Memory
//
// The cache holds about 0.4 of client-go's bytes for the same pods, and a
// relist does not hold two copies of the state (docs/benchmarks.md). The
// decoders intern the strings that repeat across objects, share equal
// maps, slices and managedFields documents between them, and hand a relist
// the cached object for every item whose UID and resourceVersion have not
// changed. Cached objects therefore share parts with each other, which is
// one more reason never to modify them. Each of these is an optimisation
// in a package of its own (internal/share, internal/reuse), which a
// Factory wires into the ListerWatcher it builds for an informer
// (relist_reuse.go).
//
// docs/ in the repository has a reading order (docs/README.md), a glossary,
// tours of one event and of a relist, each performed by a test, the rules of
// resourceVersions, a map from client-go's names to these, and the gotchas,
// each with a runnable example.
package informer
