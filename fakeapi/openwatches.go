package fakeapi

import (
	"maps"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// OpenWatch is one watch the server is serving: the request's resource,
// namespace and selectors.
type OpenWatch struct {
	// ID numbers the watch requests served, from 1, as SentEvent.WatchID.
	ID       uint64
	Resource schema.GroupVersionResource
	// Namespace is "" for a watch of every namespace, or of a
	// cluster-scoped resource.
	Namespace string
	// LabelSelector and FieldSelector are the request's, as the server
	// parsed them; "" when there is none.
	LabelSelector, FieldSelector string
}

// OpenWatches returns the watches the server is serving now, oldest
// first: how a test sees how many watches its informers hold open, and on
// what. A watch counts from the moment its request reaches the watch
// handler until the handler returns: the client went away, the server
// dropped it (DropWatches, Close), or it timed out.
func (s *Server) OpenWatches() []OpenWatch { return s.open.snapshot() }

// openWatches is the set of watches being served. Safe for concurrent use;
// the zero value is ready.
type openWatches struct {
	mu      sync.Mutex // guards watches
	watches map[uint64]OpenWatch
}

// add records ws as open and returns the function that records its end.
func (o *openWatches) add(ws *watchStream) (end func()) {
	w := OpenWatch{ID: ws.id, Resource: ws.res.gvr, Namespace: ws.filter.namespace,
		LabelSelector: ws.filter.labels.String(), FieldSelector: ws.filter.fields.String()}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.watches == nil {
		o.watches = map[uint64]OpenWatch{}
	}
	o.watches[w.ID] = w
	return func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		delete(o.watches, w.ID)
	}
}

func (o *openWatches) snapshot() []OpenWatch {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]OpenWatch, 0, len(o.watches))
	for _, id := range slices.Sorted(maps.Keys(o.watches)) {
		out = append(out, o.watches[id])
	}
	return out
}
