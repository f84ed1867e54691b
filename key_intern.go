package informer

// The queue's key function, which hands back the cache's own key strings.
// Delete this file and its one hook (KeyFunc: s.key in newInformer,
// switched by fastPaths.cacheKeys), and the informer is still correct,
// only slower: the queue then keys objects with
// deltafifo.MetaNamespaceKey, which allocates a new string for every
// event. Two more files serve only this one: internal/objkey/append.go
// (the key built on the stack) and indexer/intern.go (InternKey, the
// lookup in the cache, with intern_test.go).
//
// Why it pays: updates and deletes, two events in three on a busy watch,
// are of objects the cache holds. Their key, built into a stack buffer, is
// looked up in the cache first, and the cache's string comes back: those
// events make no new string, and every comparison of the key in the queue
// and the cache ends at the pointer instead of reading both copies of the
// bytes (bench: BenchmarkPipeline's allocs/event).

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer/internal/objkey"
)

// maxStackKey is the longest key built on the stack: a namespace and a
// name of 63 characters each, with room to spare. A longer key still
// works, built on the heap.
const maxStackKey = 128

// key is the queue's KeyFunc: deltafifo.MetaNamespaceKey, except that a key
// the cache already holds comes back as the cache's own string.
func (s *SharedInformer[T]) key(obj runtime.Object) (string, error) {
	var buf [maxStackKey]byte
	b, err := objkey.Append(buf[:0], obj)
	if err != nil {
		return "", err
	}
	if k, ok := s.idx.InternKey(b); ok {
		return k, nil
	}
	return string(b), nil
}
