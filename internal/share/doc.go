// Package share lets the objects of one informer's cache share the maps
// and byte slices they hold in identical copies: the resource requests and
// limits of every pod of a deployment, their labels, their managedFields
// documents. It is an optimisation and only that: delete this package and
// its hooks (the root package's relist_reuse.go: the decoders call
// Table.Share as wire.Options.Decoded, or the queue's Transform calls it
// after a user Transform), and the informer is still correct, only
// larger.
//
// Why it pays: a pod decoded from the wire owns four ResourceList maps
// (about 2.6 KB on the heap, two containers' requests and limits), two
// labels-and-annotations maps, two managedFields documents (1.6 KB) and
// its containers, volumes and tolerations (2.5 KB); on a cluster most of
// them are equal to another pod's: every pod of one template has the same
// containers. Slices of API structs are compared by their protobuf bytes,
// the API's own equality (a nil list and an empty one are the same to
// it). The root package's BenchmarkCachedPodHeap measures the bytes each
// cached pod retains.
//
// Why it is safe: a Table sees an object only while nobody but the
// informer has it and nothing will modify it any more: as it is decoded
// when the informer's Transform is none or declares LeavesMapsAlone (as
// StripManagedFields does), else after the Transform. Once cached, nobody may
// modify it (the informer's documented contract: cached objects are shared
// with every reader). Two cached objects that share a map are
// then as read-only as one object that is read by two handlers. Strings
// are shared at decode time instead, by reflector/wire, because they are
// immutable and so safe to share even before Transform.
//
// The table is bounded: a fixed array of slots indexed by a hash of the
// content, each keeping one value; a new value takes its slot. Values
// larger than a limit are never kept.
package share
