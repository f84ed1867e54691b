package indexer

import (
	"unsafe"

	"github.com/seed31a95821/informer/internal/cachekey"
)

// Delete this file and its one hook (the informer's key function asks
// internal/cachekey, which this file links to the Indexer), and the informer
// is still correct, only slower: Lookup then finds nothing, and the informer
// makes a new string for every key it names. Its test, intern_test.go, goes
// with it. It is one of the files of one optimisation; see the root
// package's key_intern.go.
//
// Why it pays: most watch events name an object the cache already holds (an
// update, a delete). Its key is built into a buffer, and intern finds the
// cache's own string for those bytes: no allocation, and every later
// comparison of the two strings, in the queue and in the cache, ends at the
// pointer without reading the bytes.

func init() {
	cachekey.Link(func(cache any, key [cachekey.MaxKey]byte, n int) (string, bool) {
		if x, ok := cache.(*Indexer); ok {
			return x.intern(key[:n])
		}
		return "", false
	})
}

// intern returns the key the Indexer holds that is equal to b, if it holds
// one. It locks like Get, and does not freeze the newest state either.
func (x *Indexer) intern(b []byte) (string, bool) {
	// b seen as a string, for the lookup only: it is never kept, so b may
	// change after intern returns.
	l, ok := x.point(unsafe.String(unsafe.SliceData(b), len(b)))
	return l.key, ok
}
