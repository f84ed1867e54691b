// Package indexer is the informer's cache: a thread-safe store of Kubernetes
// objects by key, with named secondary indexes, that any number of goroutines
// can read while one writer keeps it up to date.
//
// # Where it sits
//
//	API server -> reflector -> deltafifo -> [indexer] -> listers (your reads)
//	                                             \-> processor -> your handlers
//
// The informer takes changes from the delta queue and applies them here
// (Swap, Delete, or Replace after an atomic relist) before telling handlers.
// Controllers then read the cache, usually through a typed lister
// (package lister), instead of asking the API server.
//
// # What it stores
//
// Objects live under keys chosen by the caller: "namespace/name", or "name"
// for cluster-scoped objects. An index is a named function (IndexFunc) that
// says under which values an object is filed: its node, its owner, anything.
// ByIndex("node", "n1") then answers "which pods run on n1?" without looking
// at every pod. Two indexes are built in: NamespaceIndex (what
// Namespace(ns).List reads) and LabelIndex, one "key=value" per label (what
// an equality label selector such as app=web reads). More can be added at any
// time with AddIndexers; the objects already stored are filed at once.
//
// The recipe, run in ExampleIndexer_ByIndex_builtins and Example:
//
//	x := indexer.New(indexer.Indexers{"node": byNode}) // your own; nil for none
//	x.ByIndex(indexer.NamespaceIndex, "shop")                               // by namespace
//	x.ByIndex(indexer.LabelIndex, indexer.LabelIndexValue("app", "web"))    // by label
//	x.ByIndex("node", "n1")                                                 // by yours
//
// An index of your own is an IndexFunc under a name of your choosing, given
// to New or, later, to AddIndexers; "namespace" and "labels" are taken
// (ErrIndexExists, which CheckIndexers reports before anything is built).
// Through an informer, the same functions go in its Options.Indexers (or
// its AddIndexers), and a lister reads the built-in ones for you.
//
// The label index is maintained only once something needs it (see
// UseLabelIndex): the first lister List with an equality selector, or the
// first Indexer read of LabelIndex, builds it from the stored objects, and
// every write maintains it from then on. Until then writes do not compare
// labels and no memory goes to label buckets: many informers never list by
// label, and they should not pay for it on every write.
//
// OBJECTS ARE SHARED, NOT COPIED. Every read hands out the very object that
// was written, and every other reader sees the same one. NEVER MODIFY AN
// OBJECT YOU READ FROM THE CACHE: you would change what every other reader
// sees, silently, and break the promise that the cache mirrors the server.
// Call DeepCopyObject (or use the lister's CopyOnRead option) first.
//
// # The problem: readers that stall the writer
//
// client-go's ThreadSafeStore guards one map and its indexes with one
// sync.RWMutex. Listing a namespace takes the read lock and copies the whole
// namespace out while holding it. A writer must wait until no reader holds
// the lock, and while it waits Go's RWMutex makes new readers queue behind
// it. With ten goroutines listing a namespace of 10,000 pods, the lock is
// almost never free: the writer manages on the order of a hundred writes per
// second, and the informer falls behind the API server.
//
// # The design: readers take immutable versions
//
// Here a reader never holds a lock while it walks the cache. Everything the
// indexer holds (objects, indexes, resourceVersion, index definitions) is
// one version, a value called a state. A reader takes the newest state (see
// Read and Freeze) and walks it at leisure; nothing changes a state while a reader
// is reading it, or ever again once a reader keeps it. A writer makes the
// next state and publishes it with one atomic pointer store; readers that
// come later take that one.
//
// Copying 10,000 objects per write would be absurd, so the states are
// persistent hash tries (trie.go): a tree of 32-way nodes in which an edit
// copies only the path from the root to the changed entry (three nodes for
// 10,000 keys, four for a million) and shares the rest with the previous
// version. An index is a trie from value to a bucket, and a bucket is a trie
// of keys; so moving a pod to another node copies a few small paths too.
//
// One refinement makes writes as cheap as a map's when nobody is reading.
// A state is open until a reader takes it to keep, and frozen from then on:
//
//	open --(a reader calls Freeze: a view it may keep)--> frozen
//	  ^                                                      |
//	  +---(next write: thaw into a new generation)----------+
//
// Most reads are over before they return, and those do not freeze the
// state. A point read (Get, and the informer's key lookup in intern.go)
// looks up its one key under mu (below), so that the informer's lookup
// before each write does not make that write copy its paths. A read of many objects (List, ByIndex, Len, a lister's
// query, Read) counts itself among the state's readers while it runs: a
// write that comes meanwhile thaws a new generation, as after a Freeze,
// and once the count is back to zero the writer edits in place again. Were
// such reads to freeze the state, every write after one would copy the
// paths it changes, and with writes spread over the cache, as a watch's
// are, that is most of the cache copied once per read.
//
// Every trie node records the generation that created it. While a state is
// open and no read is in progress on it (a point read is over before mu is
// released), its writer edits the nodes of its own generation in place: an
// update of an existing key is a lookup and a store, with no allocation.
// The first write after a reader froze the state, or while a read is in
// progress, starts a new generation, and from then on every node it touches
// is copied before it is changed, so the state stays exactly as its readers
// saw it.
// (Clojure calls this "transients".)
//
// The same rule lets the writer recycle. Deleting keys unlinks trie nodes,
// and adding keys needs new ones; a node of the writer's own generation that
// a delete unlinks was never seen by any reader, so the writer keeps it as a
// spare and builds the next new node from it. A cache whose pods come and go
// then makes almost no garbage. That is an optimisation and only that: it
// lives in node_recycling.go, which can be deleted with its one hook.
//
// Two locks make the hand-over safe, and neither is ever held for long:
//
//   - writeMu serialises writers. A writer plans its change under it,
//     running the index functions (caller code) and, for Replace or
//     AddIndexers, building a whole new state. Readers never take writeMu,
//     except once: the reader that first needs the label index builds it
//     (UseLabelIndex) as a writer would.
//   - mu guards the hand-over of an open state. The writer holds it while it
//     applies one already-planned write (O(log n)); a reader holds it only to
//     set the frozen flag, to count itself in or out of the state's readers,
//     or for a point read to look up one key, and only if the newest state
//     is still open. When it is already frozen (after a Freeze, until the
//     next write), taking it is one atomic load and no lock at all.
//
// So a writer never waits for a reader to finish reading (at most for one
// key lookup), and a reader never waits for a writer's index functions or
// rebuilds: at most for one planned edit to be applied.
//
// # What it costs
//
//   - Lookups walk a trie (a few pointer hops) instead of probing a hash map,
//     and ByIndex must find each key of a bucket in the object trie (it walks
//     the two tries side by side, so that costs about one level per key).
//   - The first write after a reader froze the state (Freeze), or while a
//     read is in progress, copies a path per trie it touches: at 10,000
//     objects about 1.6 KB in 9 allocations (BenchmarkUpdateAfterRead),
//     against none for a write that follows another write. A cache frozen
//     between every two writes pays that on every write; so does one whose
//     reads overlap every write. That is why the name says it: Freeze is the
//     one read with a cost after it returns.
//   - Once the label index is in use, every update compares the new labels
//     with the values the object is filed under, and every object keeps its
//     label values (one "key=value" string per label). Unchanged labels cost
//     no allocation, but reading a label map and the values that are not in
//     the CPU cache can double the cost of an update. (It is still several
//     times cheaper than client-go's with a label index of its own: see
//     bench/, BenchmarkIndexerUpdate.) Putting it in use costs one O(n)
//     build, during which writers wait: it files every object and records
//     its values in its entry, so the object trie is copied once too
//     (BenchmarkUseLabelIndex).
//   - A view frozen before the label index came into use answers
//     LabelIndex reads correctly, but by scanning all its objects.
//   - A reader that keeps a frozen view keeps that version's objects alive.
//     Long-held views of a fast-changing cache cost memory.
//   - List order is hash order: stable for one snapshot, otherwise
//     meaningless (as with client-go's maps).
//   - Replace and AddIndexers build a complete new state, O(n), while the
//     old one keeps serving readers: for a moment both are in memory.
//
// # Keeping the indexes right
//
// A write is planned before it is applied (filing.go): every index function
// runs first, and if one fails (returns an error or panics) the write is
// refused with an *IndexFuncError and nothing changes. Only then is the
// state edited, by code that cannot fail: a write happens completely or not
// at all. Replace and AddIndexers are all-or-nothing too.
//
// An update compares where the object was filed with where it goes and moves
// the key only between the values that differ; a value whose last key leaves
// is removed, so an index of short-lived values does not grow forever. Every
// index, built-in or custom, remembers the values it filed each object under
// (state.go, entry), and an update or a delete takes the key out of those:
// it never re-reads the stored object, nor re-runs an index function on it.
// A caller that (wrongly) modified a cached object in place therefore cannot
// leave a key filed under values it no longer has: the next update or delete
// of that key puts every index right. The built-in indexes read only
// metadata and compare the new namespace and labels with the remembered
// ones directly (the labels only while the label index is in use), with no
// allocation when they are unchanged. What LabelIndex files an object under
// is written once, in labels.go.
//
// The Indexer also records the last resourceVersion it reflects: Replace sets
// it, an Add or Update of an object with one sets it, and SetResourceVersion
// sets it for progress without an object (a bookmark, a delete).
//
// # Files a first reading can skip
//
// Three files are fast paths and only that, each headed by the rule "delete
// this file and its one hook, and the informer is still correct, only
// slower": node_recycling.go (the writer builds new trie nodes from the ones
// its deletes unlinked), node_retiring.go (and from the ones it copied
// while a read was in progress, once that read is over) and intern.go (InternKey: the informer names an
// object with the key string the cache already holds). batch.go, several writes under one hold of
// the write lock, follows the same rule. The rest is the design above:
// trie.go, state.go, filing.go, labels.go, index.go, indexer.go and
// snapshot.go.
//
// Errors are listed in errors.go.
package indexer
