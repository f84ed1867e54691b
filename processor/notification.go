package processor

import (
	"strconv"

	"k8s.io/apimachinery/pkg/runtime"
)

// EventType says what happened to an object: it was added, updated or
// deleted. The zero value is not a valid event type, so a forgotten field is
// visible instead of silently meaning "add".
type EventType int

const (
	// Add reports an object the cache did not hold before, or, with
	// InInitialList set, an object that is part of the initial state.
	Add EventType = iota + 1
	// Update reports a new version of an object the cache already held. A
	// resync is an Update whose Old and Object are the same object.
	Update
	// Delete reports that an object left the cache.
	Delete
)

// String returns "Add", "Update" or "Delete", for logs and error messages.
func (t EventType) String() string {
	switch t {
	case Add:
		return "Add"
	case Update:
		return "Update"
	case Delete:
		return "Delete"
	default:
		return "EventType(" + strconv.Itoa(int(t)) + ")"
	}
}

// Notification is one change handed to a handler.
//
// It is a plain value: the processor stores it once, in the journal every
// handler reads, and hands each handler a copy, so a handler may keep it. The objects it points to are shared with the cache
// and with every other handler, so a handler must treat them as read-only
// (DeepCopy before modifying).
type Notification struct {
	// Type says which of the fields below are meaningful.
	Type EventType
	// Key identifies the object in the cache ("namespace/name", or "name"
	// for cluster-scoped objects, unless the informer uses another key
	// function). It lets a handler enqueue work without inspecting Object.
	Key string
	// Object is the object after the change: the added object, the new
	// version of an updated one, or the final (or last known) state of a
	// deleted one. It is never nil.
	Object runtime.Object
	// Old is the version the cache held before an Update; nil otherwise.
	Old runtime.Object
	// InInitialList is set on an Add that belongs to the initial state: the
	// informer's first list, or the replay a late handler receives when it
	// registers. Handlers use it to tell "this already existed" from "this
	// was just created".
	InInitialList bool
	// FinalStateUnknown is set on a Delete the informer inferred from a
	// relist rather than observed: the object vanished while the watch was
	// down, so Object is the last state the cache knew, not necessarily its
	// final state. This replaces client-go's DeletedFinalStateUnknown
	// tombstone, which forced a type assertion on every delete handler.
	FinalStateUnknown bool
}

// Handler receives notifications, one at a time, from its own goroutine.
//
// Handle is never called concurrently with itself for the same registration,
// and notifications arrive in the order they were distributed, unless the
// handler falls more than its backlog limit behind: its notifications then
// coalesce by key (see the package documentation). A handler may be slow
// without delaying other handlers; it only grows its own backlog. The
// usual handler does as little as possible: compute a key and put it on a
// work queue.
type Handler interface {
	Handle(n Notification)
}

// HandlerFunc adapts an ordinary function to the Handler interface.
type HandlerFunc func(n Notification)

// Handle calls f(n).
func (f HandlerFunc) Handle(n Notification) { f(n) }
