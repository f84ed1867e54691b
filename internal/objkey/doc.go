// Package objkey is the one place that says what an object's key is:
// "namespace/name", or just "name" for a cluster-scoped object, the format
// of client-go's MetaNamespaceKeyFunc. The queue files deltas under it
// (deltafifo.MetaNamespaceKey), the cache stores objects under it, a
// lister's Get rebuilds it from a namespace and a name (Join), and a
// controller's work queue carries it (informer.KeyOf and SplitKey). One
// builder, so that a key made in one of those places always finds the
// object in another.
//
// It is also the one place that says when an object is no object at all
// (IsNil): a nil interface, or an interface holding a nil pointer, whose
// methods would panic. Both the queue and the cache refuse one with
// ErrNilObject.
//
// append.go is a fast path for the informer's key function, which looks a
// key up in the cache before deciding to allocate it; see its header.
package objkey
