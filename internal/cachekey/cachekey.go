package cachekey

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer/internal/objkey"
)

// MaxKey is the longest key Lookup looks up; it finds nothing for a longer
// one. A key the caller built in a stack buffer of this size (as the
// informer's key function does) stays on the stack: Lookup hands the
// indexer a copy of its bytes by value, not the caller's buffer. Passing the
// buffer itself through the link, a call escape analysis cannot see into,
// would move every caller's buffer to the heap: one allocation per key,
// which is what Lookup exists to save. A longer key had to leave the stack
// anyway.
const MaxKey = 128

// lookup is the indexer's lookup, set by Link during package initialisation
// and only read afterwards.
var lookup func(cache any, key [MaxKey]byte, n int) (string, bool)

// Link is called once, by package indexer's init, with its lookup: the key
// string that cache (an *indexer.Indexer) holds equal to key[:n], if any.
func Link(f func(cache any, key [MaxKey]byte, n int) (string, bool)) { lookup = f }

// Lookup returns the key string cache (an *indexer.Indexer) holds that is
// equal to key, if it holds one: a caller about to make a string of key can
// take the stored string instead. key is only read, never kept, so the
// caller may reuse its buffer. Without the indexer's link, or for a key
// longer than MaxKey, Lookup finds nothing.
func Lookup(cache any, key []byte) (string, bool) {
	if lookup == nil || len(key) > MaxKey {
		return "", false
	}
	var k [MaxKey]byte
	copy(k[:], key)
	return lookup(cache, k, len(key))
}

// KeyOf returns obj's key (objkey.Of's "namespace/name"), as the string
// cache holds for it when it holds one, and a new string otherwise: what
// the informer's key function hands its queue. The key is built in a stack
// buffer of MaxKey bytes, so a key the cache holds costs no allocation.
func KeyOf(cache any, obj runtime.Object) (string, error) {
	var buf [MaxKey]byte
	b, err := objkey.Append(buf[:0], obj)
	if err != nil {
		return "", err
	}
	if k, ok := Lookup(cache, b); ok {
		return k, nil
	}
	return string(b), nil
}
