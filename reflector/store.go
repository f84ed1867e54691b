package reflector

import "k8s.io/apimachinery/pkg/runtime"

// Store is where a Reflector puts what it learns from the API server.
//
// The reflector does not know what is behind it: in the shared informer it is
// a deltafifo.Queue, in a test it can be a plain map. Keeping this interface
// here, on the consumer's side, is what lets the reflector package stand alone
// without importing the queue.
//
// Every method may be called only from the reflector's own goroutine; an
// implementation must nevertheless be safe for concurrent use, because its
// readers live on other goroutines.
type Store interface {
	// Add records an object the watch reported as ADDED.
	Add(obj runtime.Object) error
	// Update records an object the watch reported as MODIFIED.
	Update(obj runtime.Object) error
	// Delete records the final state of an object the watch reported as DELETED.
	Delete(obj runtime.Object) error
	// Replace states the complete set of objects at resourceVersion, after a
	// list (or a WatchList's initial events). Objects the store holds that are
	// absent from list were deleted while nobody was watching.
	Replace(list []runtime.Object, resourceVersion string) error
	// Resync asks the store to re-deliver what it holds, so that handlers
	// get a periodic chance to reconcile. An error ends the watch, and the
	// reflector relists after a backoff (as client-go does): a store that
	// cannot re-deliver what it holds is repaired only by a snapshot.
	Resync() error
	// Bookmark records that the server has reached resourceVersion with no
	// further change to this resource: progress without an object.
	Bookmark(resourceVersion string) error
}
