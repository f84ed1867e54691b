// Package reuse lets a relist keep the objects the cache already holds
// instead of a second, freshly decoded copy of each. It is an optimisation
// and only that: delete this package and its hooks (the root package's
// relist_reuse.go, which the informer's New and the Factory wire in, and
// reflector/wire's relist_reuse.go), and a relist is still correct, only
// twice as large while it runs.
//
// Why it pays: a relist decodes the whole state again while the cache
// still holds the old one, so for a moment the process holds two copies of
// everything (client-go#1377: a relist doubles memory). Most objects have
// not changed: an object whose UID and resourceVersion are those of the
// cached one is, byte for byte, the object the cache holds. The decoders
// look each listed object up as soon as it is decoded and hand on the
// cached object instead (a watch event's object as it is; a list item as a
// shallow copy of it, since a list holds its items by value), so the fresh
// copy dies at once. In a protobuf WatchList they do better: they read
// only the object's metadata and decode it only when the cache does not
// hold it unchanged; when the cache is empty, as at an informer's first
// sync, Begin says so and they look nothing up. The informer's queue then
// takes the cached object back in place of what it receives. The compare command's "peak heap
// relist" row measures it (bench/cmd/compare).
//
// A Factory hands an informer's Cache to the decoders of the
// reflector/wire ListerWatcher it builds for it, as wire.Options.Relist (a
// Cache is a wire.RelistCache); the informer's queue takes the cached
// objects back (Take).
package reuse
