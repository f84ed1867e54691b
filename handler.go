package informer

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer/processor"
)

// Handler is what a controller registers to hear about changes to objects of
// type T. Any field may be nil: that event is then ignored.
//
// Every function runs on the handler's own goroutine, one call at a time, in
// the order the changes happened to each object. A slow handler delays only
// itself. The objects are the cache's own: read them, never modify them
// (DeepCopy first).
type Handler[T runtime.Object] struct {
	// OnAdd is called for an object the handler has not seen before.
	// inInitialList is true while the informer is delivering the state it
	// found at start (or, for a handler added late, the state at the moment it
	// was added), and false for objects created afterwards.
	OnAdd func(obj T, inInitialList bool)
	// OnUpdate is called when an object changed, and also on every resync,
	// when oldObj and newObj are the same object.
	OnUpdate func(oldObj, newObj T)
	// OnDelete is called with the object's final state. finalStateUnknown is
	// true when the informer missed the deletion (the watch was broken) and
	// only learned of it from a relist: obj is then the last state the cache
	// knew, which may be older than the state at deletion. Unlike client-go,
	// the object is always a T: there is no tombstone wrapper to type-assert.
	OnDelete func(obj T, finalStateUnknown bool)
}

// HandlerOptions tune one handler registration. This is the type a user
// of an informer sets (AddEventHandler). Name, ResyncPeriod, BacklogLimit
// and KeepAllUpdates are copied into a processor.HandlerOptions, whose doc
// comments hold their rules (defaults, the minimum period, which negative
// values are refused); UpdateFilter is the informer's own, applied before
// a typed Handler is called. processor.HandlerOptions is set directly only
// by code that drives a processor.Processor without an informer.
type HandlerOptions struct {
	// Name identifies the handler in statistics and in errors, such as a
	// recovered panic. Empty means a generated name.
	Name string
	// ResyncPeriod is how often this handler receives OnUpdate(obj, obj) for
	// every cached object, even though nothing changed: a periodic chance to
	// repair drift in the world the controller manages. Zero means never. A
	// resync re-reads the cache, not the API server. The informer checks once
	// a second which handlers are due, so a resync comes up to a second after
	// its period; periods under a second are raised to one. The path through
	// the pipeline: docs/architecture.md, "Resync".
	ResyncPeriod time.Duration
	// UpdateFilter, when set, decides which updates reach the handler, such
	// as GenerationChanged or AnyOf(LabelsChanged, AnnotationsChanged).
	// Adds, deletes and resyncs always pass. It runs on the handler's own
	// goroutine.
	UpdateFilter UpdateFilter
	// BacklogLimit is how many notifications the handler may fall behind
	// before its backlog coalesces by key: an object that changes again
	// while it waits keeps one notification, from the version the handler
	// saw last to the newest, and an object created and deleted while it
	// waits is not mentioned at all; a deletion of an object the handler
	// saw is always delivered. Memory then grows with the number of
	// objects, not of events. Zero means processor.DefaultBacklogLimit
	// (1024). See docs/reliability.md for what a handler may see.
	BacklogLimit int
	// KeepAllUpdates turns that bound off for this handler: it is told
	// about every change however far behind it falls, at the cost of
	// memory in proportion to events. For handlers that must see every
	// version. An informer whose Options.KeepAllUpdates is set (the queue
	// keeps every delta) sets it for all its handlers, whatever this says.
	KeepAllUpdates bool
}

// dispatch adapts a typed Handler to the processor's untyped notifications.
// The processor only carries objects that passed the informer's type check,
// so a failed assertion here is a bug in this package: it is reported as an
// error instead of panicking inside a user's goroutine.
type dispatch[T runtime.Object] struct {
	h      Handler[T]
	filter UpdateFilter
	report func(error)
}

// Handle implements processor.Handler.
func (d dispatch[T]) Handle(n processor.Notification) {
	obj, ok := n.Object.(T)
	if !ok {
		d.report(fmt.Errorf("informer: notification for %q carries %T: %w", n.Key, n.Object, ErrWrongType))
		return
	}
	switch n.Type {
	case processor.Add:
		if d.h.OnAdd != nil {
			d.h.OnAdd(obj, n.InInitialList)
		}
	case processor.Update:
		old, _ := n.Old.(T)
		if d.h.OnUpdate != nil && d.filter.passes(n.Old, n.Object) {
			d.h.OnUpdate(old, obj)
		}
	case processor.Delete:
		if d.h.OnDelete != nil {
			d.h.OnDelete(obj, n.FinalStateUnknown)
		}
	}
}
