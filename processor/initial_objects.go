package processor

import (
	"iter"

	"k8s.io/apimachinery/pkg/runtime"
)

// InitialObjects is what a handler added late is first told about: the
// objects the cache holds at the moment it is added, with their keys. The
// informer passes a frozen view of its indexer, which satisfies
// InitialObjects and is taken in O(1) under the informer's lock; the
// processor reads it later, on the handler's own goroutine, so an
// InitialObjects must never change once handed over. That is what keeps a
// late handler's catch-up, O(N) handler calls, off the pipeline.
//
// It is named for what it holds, where reflector.State is the reflector's
// position in its loop.
type InitialObjects interface {
	// Len is the number of objects, counted as the handler's pending work.
	Len() int
	// All yields every object with its key, in any order.
	All() iter.Seq2[string, runtime.Object]
}

// Objects is an InitialObjects backed by a map from key to object, for
// callers (and tests) that have no snapshot at hand. The map must not
// change afterwards.
type Objects map[string]runtime.Object

// Len implements InitialObjects.
func (o Objects) Len() int { return len(o) }

// All implements InitialObjects.
func (o Objects) All() iter.Seq2[string, runtime.Object] {
	return func(yield func(string, runtime.Object) bool) {
		for k, obj := range o {
			if !yield(k, obj) {
				return
			}
		}
	}
}
