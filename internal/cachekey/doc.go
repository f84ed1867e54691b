// Package cachekey hands the informer's key function the key string its
// cache already holds for an object, so that naming the object of an update
// or a delete (two watch events in three) makes no new string. It is an
// optimisation and only that: delete indexer/intern.go, which links the
// cache in, and Lookup finds nothing; the informer is still correct, only
// slower (one key string per event, compared byte by byte in the queue and
// the cache instead of ending at the pointer).
//
// KeyOf is that key function's body: the key built on the stack, then
// looked up (Lookup).
//
// It lives here, not on indexer.Indexer, to keep the fast path out of the
// indexer's public API: only code under github.com/seed31a95821/informer/
// can import it. Package indexer links its lookup in when it is
// initialised (Link), the way packages of a module share what they keep
// from their users; the link is set once, before main runs, and never
// changes, so it is wiring, not state.
package cachekey
