package fakeapi

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// The server keeps two records for checkers: every write it applied (in RV
// order) and every event it sent on a watch. A test can then assert, after
// the system quiesces, that a cache equals the replay of the writes, or that
// a client received a given event.

// DefaultHistoryLimit is how many entries each record keeps when
// Options.HistoryLimit is zero. The oldest entries are dropped first.
const DefaultHistoryLimit = 1 << 20

// Write is one applied write.
type Write struct {
	// ResourceVersion is the RV the write produced.
	ResourceVersion uint64
	// Type is watch.Added, watch.Modified or watch.Deleted.
	Type      watch.EventType
	Resource  schema.GroupVersionResource
	Namespace string
	Name      string
	// Object is the state after the write (for a delete, the final state).
	// It is a copy: changing it does not touch the server.
	Object runtime.Object
}

// SentEvent is one event written to a watch stream.
type SentEvent struct {
	// WatchID numbers the watch requests served, from 1.
	WatchID  uint64
	Resource schema.GroupVersionResource
	// Type is ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.
	Type            watch.EventType
	ResourceVersion string
	Namespace       string
	Name            string
	// InitialEvent marks the synthetic ADDED events that replay the current
	// state at the start of a watch, and the bookmark that ends them.
	InitialEvent bool
}

// writeRecord is the store's bounded list of applied writes. Like the store
// it is not safe for concurrent use. A negative limit records nothing.
type writeRecord struct {
	limit   int
	entries []event
}

func (r *writeRecord) add(ev event) {
	if r.limit < 0 {
		return
	}
	r.entries = append(r.entries, ev)
	if r.limit > 0 && len(r.entries) > 2*r.limit {
		// Trim in bulk so that recording stays O(1) amortised.
		r.entries = append(r.entries[:0:0], r.entries[len(r.entries)-r.limit:]...)
	}
}

// snapshot returns copies of the recorded writes, oldest first.
func (r *writeRecord) snapshot() []Write {
	entries := r.entries
	if r.limit > 0 && len(entries) > r.limit {
		entries = entries[len(entries)-r.limit:]
	}
	out := make([]Write, len(entries))
	for i, ev := range entries {
		ns, name := splitKey(ev.key)
		out[i] = Write{ResourceVersion: ev.rv, Type: ev.typ, Resource: ev.res.gvr,
			Namespace: ns, Name: name, Object: ev.obj.DeepCopyObject()}
	}
	return out
}

// sentRecord is the bounded list of events sent on watches. It is safe for
// concurrent use: every watch handler appends to it.
type sentRecord struct {
	limit int
	mu    sync.Mutex // guards entries and watches
	// entries holds the sent events, oldest first.
	entries []SentEvent
	// watches counts the watch requests started, to number them.
	watches uint64
}

func (r *sentRecord) nextWatchID() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.watches++
	return r.watches
}

func (r *sentRecord) add(e SentEvent) {
	if r.limit < 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries = append(r.entries, e)
	if r.limit > 0 && len(r.entries) > 2*r.limit {
		r.entries = append(r.entries[:0:0], r.entries[len(r.entries)-r.limit:]...)
	}
}

func (r *sentRecord) snapshot() []SentEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	entries := r.entries
	if r.limit > 0 && len(entries) > r.limit {
		entries = entries[len(entries)-r.limit:]
	}
	return append([]SentEvent(nil), entries...)
}

// splitKey undoes objectKey.
func splitKey(key string) (namespace, name string) {
	for i := 0; i < len(key); i++ {
		if key[i] == '/' {
			return key[:i], key[i+1:]
		}
	}
	return "", key
}
