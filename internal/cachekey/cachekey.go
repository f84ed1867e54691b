package cachekey

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
