// Package share lets the objects of one informer's cache hold one copy of
// each value they repeat: the strings (namespaces, label keys and values,
// images, node names, owner kinds, condition reasons), and the maps,
// slices and byte slices (the labels of every pod of a deployment, its
// containers, volumes and resource lists, its managedFields documents, the
// kube-root-ca.crt every namespace holds). It is an optimisation and only
// that: delete this package and its calls (reflector/wire's decoders call
// Table.Strings; the root package's relist_reuse.go hands Table.Share to
// the decoders as wire.Options.Decoded, or runs it after a user
// Transform), and the informer is still correct, only larger.
//
// # Why it pays
//
// A pod decoded from the wire owns four ResourceList maps (about 2.6 KB
// on the heap), two labels-and-annotations maps, two managedFields
// documents (1.6 KB), its containers, volumes and tolerations (2.5 KB),
// and a hundred strings; on a cluster most are equal to another pod's:
// every pod of one template has the same containers, security context and
// affinity. A pod's own lists (its conditions, its containers' statuses)
// are not shared but given their exact size: a decoder grows them by
// doubling, and five conditions took the room of eight. The root package's
// BenchmarkCachedPodHeap and reflector/wire's BenchmarkListHeapPerPod
// measure the bytes each cached pod retains, bench/cmd/compare the same
// against client-go after a random-order churn and with unique templates.
//
// # Safe
//
// Strings are immutable: objects that share one cannot change it for each
// other, and a Transform that rewrites a field assigns a new string. So
// Table.Strings runs on everything, as soon as it is decoded.
//
// Maps, slices and byte slices can be modified in place, so Table.Share
// sees an object only while nobody but the informer has it and nothing
// will modify it any more: as it is decoded when the informer's Transform
// is none or declares SetsFieldsOnly (as StripManagedFields does: it
// touches no map, slice or byte slice), else after the Transform. Once cached, nobody may modify it (the
// informer's documented contract: cached objects are shared with every
// reader). Two cached objects that share a map are then as read-only as
// one object that two handlers read.
//
// Values are shared only with equal values, and equality is decided on
// content, never on a hash alone: byte for byte for byte slices and a
// Secret's data, key by key for maps, by value and format for quantities
// ("1Gi" and "1073741824" stay apart), by protobuf bytes for slices of API
// structs and the structs a pod's spec points to (the API's own equality: a nil list and an empty one inside an
// element are the same to it, as on the wire). A hash only says where to
// look, and is seeded per table so that a server cannot aim collisions;
// one that collides anyway is simply not shared.
//
// # Found from the wire
//
// A slice of API structs, or a struct a pod's spec points to, is kept
// under the hash of its rendering, which is the field's bytes in its
// parent message as the generated Marshal, and so the API server, writes
// them. reflector/wire's protobuf decoder, given the table
// (wire.Options.PodParts, which the root package's relist_reuse.go sets
// with ShareParts), looks a pod's containers, volumes, tolerations, owner
// references, security context and affinity up by the bytes it reads,
// and its labels and node selector by the entries it reads (a map is kept
// under the sum of its entries' hashes), with Table.FindPart (parts.go),
// and takes the kept value instead of decoding them: in a random-order
// churn, where its own window of recent parts has forgotten the template,
// each pod after a template's first is then neither decoded nor rendered
// twice (once to be found, once to compare): the first time a value is
// found, its rendering is compared with the bytes in full and kept, and
// later pods' bytes are compared with that (a map: its entries looked
// up). parts.go says why the value taken is the one decoding would give.
// The same decoder takes the strings that repeat (a namespace, an image,
// a condition's type) by their bytes with Table.StringOf, instead of
// making a string that Strings would replace at once, and a managedFields
// document with Table.FindBytes, instead of a copy that Share would drop.
//
// # Bounded, and not fooled by arrival order
//
// A Table keeps every map, slice and byte slice it meets (every string it
// meets twice), found by a hash of its content, and
// charges each its estimated heap bytes and its entry (Stats): it grows
// with the distinct values it meets, so that a population of any size and
// in any order finds each value kept when its second copy arrives. It
// holds maps, slices and byte slices weakly (weak.go): a value that no
// object holds any more, as a pod's own annotations once the pod is
// updated, is left to the garbage collector, and its entry is dropped when
// the table ages or another value comes under its hash. A fixed
// array of slots, as the two tables this package replaces were, forgot
// most values of a large population before their twins arrived: after an
// update of every pod in random order, 5.4 became 8.8 KB a pod.
//
// It is bounded by its Budget in bytes (DefaultBudget; reflector/wire's
// strings-only tables StringsBudget). Past it the table ages every entry,
// as a counting CLOCK does, until it is back under three quarters of its
// budget: each pass halves every entry's hits and forgets those at zero.
// A value met once (a pod's own annotation or status document, a unique
// template) loses its entry at the second pass after it arrived, which gives
// its twin a quarter of the budget of other arrivals to come in; a value
// met as often as the values many cached objects hold outlives as many
// halvings, however recent the values met once are. So a server that
// sends only distinct values makes the table age, never grow past its
// budget, and what it keeps that the cache no longer holds is at most that
// budget, in entries and strings. Values whose content passes 64 KiB, and strings longer than 256
// bytes, are never kept: they are rarely repeated.
//
// Reference counts, which would free a value as its last object leaves,
// would need a hook in the cache for every delete and replace; weak
// pointers do not: the garbage collector counts. Before them, the table
// kept every replaced value alive until its budget aged it out: after a
// second churn of 10k pods, 0.7 KB a pod of annotations no pod held.
// Strings are still held, and aged: they are small, and most repeat. A
// string is kept only when it is met a second time (doorkeeper.go): one
// met once, as a write time stamped into every update, would otherwise
// hold an entry and itself after its object moved on; the first object
// that holds a repeated string keeps its own copy.
package share
