package cachekey

// lookup is the indexer's lookup, set by Link during package initialisation
// and only read afterwards.
var lookup func(cache any, key []byte) (string, bool)

// Link is called once, by package indexer's init, with its lookup: the key
// string that cache (an *indexer.Indexer) holds equal to key, if any.
func Link(f func(cache any, key []byte) (string, bool)) { lookup = f }

// Lookup returns the key string cache (an *indexer.Indexer) holds that is
// equal to key, if it holds one: a caller about to make a string of key can
// take the stored string instead. key is only read, never kept, so the
// caller may reuse its buffer. Without the indexer's link Lookup finds
// nothing.
func Lookup(cache any, key []byte) (string, bool) {
	if lookup == nil {
		return "", false
	}
	return lookup(cache, key)
}
