package indexer

import "unsafe"

// Delete this file and its one hook (the informer's key function,
// key_intern.go in the root package, which calls InternKey), and the
// informer is still correct, only slower: it then makes a new string for
// every key it names. Its test, intern_test.go, goes with it.
//
// Why it pays: most watch events name an object the cache already holds (an
// update, a delete). Its key is built into a buffer, and InternKey finds the
// cache's own string for those bytes: no allocation, and every later
// comparison of the two strings, in the queue and in the cache, ends at the
// pointer without reading the bytes.

// InternKey returns the key string the Indexer holds that is equal to key,
// if it holds one. It is for a caller that builds keys into a buffer it
// reuses, as the informer's queue does for every watch event: it can take
// the stored string instead of making a new one, and a later comparison of
// the two ends at the pointer. key is only read, never kept, so the caller
// may reuse its buffer, and a buffer on the caller's stack stays there. It
// locks like Get, and does not freeze the newest state either.
func (x *Indexer) InternKey(key []byte) (string, bool) {
	// key seen as a string, for the lookup only: it is never kept, so the
	// bytes may change after InternKey returns.
	l, ok := x.point(unsafe.String(unsafe.SliceData(key), len(key)))
	return l.key, ok
}
