// Package lister gives controllers a typed, read-only view of the informer's
// cache: Lister[*corev1.Pod] instead of an indexer full of runtime.Object.
//
// # Where it sits
//
//	API server -> reflector -> deltafifo -> indexer -> [lister] -> your controller
//
// A controller reconciles by reading the cache, not the API server: "which
// pods does this ReplicaSet own?", "does web-1 still exist?". The lister
// answers those reads from the indexer, by namespace and name or by label
// selector, and returns objects of the controller's type:
//
//	pods := lister.New[*corev1.Pod](idx, lister.Options{Resource: corev1.Resource("pods")})
//	web1, err := pods.Namespace("shop").Get("web-1") // apierrors.IsNotFound(err) if absent
//	mine, err := pods.Namespace("shop").List(labels.SelectorFromSet(labels.Set{"app": "web"}))
//
// It replaces client-go's generated listers (one hand-written type per
// resource, all alike) with one generic type, and its panics (a type
// assertion on whatever the store holds) with errors: a *TypeError if the
// indexer holds an object that is not a T.
//
// # How List avoids scanning
//
// client-go answers a label selector by testing every object in the cache: at
// 100,000 pods that is 100,000 label comparisons for any query. Here the
// indexer keeps a label index (one bucket of keys per "key=value") and a
// namespace index, and every List reads one consistent snapshot of both. The
// query planner (query.go) looks at the equality requirements of the
// selector ("app=web", "app==web", "app in (web)"), and at the namespace, and
// reads only the smallest matching bucket; it then tests each candidate
// against the whole selector and the namespace. A List therefore costs in
// proportion to the smallest bucket, not to the cache. Selectors with no
// equality requirement ("tier!=db", "!canary") fall back to the namespace
// bucket or, across namespaces, to a scan.
//
// The indexer maintains its label index only once it is needed: the first
// List with an equality requirement builds it (one O(n) pass), and from then
// on the informer's writes keep it up to date. Informers whose listers never
// select by label never pay for it. What the label index files an object
// under is the indexer's to say (indexer/labels.go); the planner only turns
// a selector's equality requirements into the same values, with
// indexer.LabelIndexValue. The index remembers where it filed each object
// and an update moves it from there, so its answers are a scan's answers:
// even an object someone modified in place (which they must not: see
// below) is found under its new labels once its next update arrives.
//
// # Several namespaces, several caches
//
// An informer that watches a few namespaces (informer.ForScope) keeps one
// cache per namespace. NewByNamespace makes one Lister over them:
// Namespace(ns) and Get read ns's cache alone, at the cost of a Lister
// over one cache, and List and ByIndex join what every cache answers
// (namespaces.go).
//
// # Sharing and copying
//
// BY DEFAULT THE OBJECTS A LISTER RETURNS ARE THE CACHE'S OWN, SHARED WITH
// EVERY OTHER READER. NEVER MODIFY THEM. To change an object, DeepCopy it and
// send the copy to the API server; the cache will follow through the watch.
// Options.CopyOnRead makes the lister deep-copy every object it returns, for
// callers who prefer safety to speed: a copy per object per call.
//
// A Lister is safe for concurrent use, holds no state beyond its options, and
// never blocks the informer's writer (see package indexer).
package lister
