// Package apply keeps managedFields and performs server-side apply, with
// kube-apiserver's own machinery.
//
// # What it imitates
//
// kube-apiserver records, in metadata.managedFields, which client (the
// "field manager") last set which fields of every object, for every
// create, update and patch. Server-side apply (PATCH with Content-Type
// application/apply-patch+yaml, kubectl apply --server-side) builds on
// it: the client sends the fields it wants to own, as a partial object;
// the server merges them into the live object, records the client as
// their owner, and refuses with 409 Conflict to change a field another
// manager owns, unless force takes it over. A field the manager owned
// before and no longer sends is removed; apply creates a missing object.
//
// The merge, the ownership bookkeeping and the conflicts are
// apimachinery's managedfields package (structured-merge-diff), the real
// server's own machinery (Managers, managers.go). It needs each type's
// schema: for the built-in types, the recorded OpenAPI v3 documents of
// fakeapi/internal/openapi (list types, map keys); for other types, a schema deduced
// from the objects, which treats every list as atomic, as the real server
// does for custom resources without one. Where that machinery cannot be
// used, Record (approximate.go) writes entries of the real shape with
// approximate field sets. ManagerName names a writer the real way. A
// resource served in two versions (fakeapi/internal/convert) has owners
// who wrote through either; the field manager converts between them with
// those conversions (viewconvert.go), as the real one does with its scheme.
//
// # Its place
//
// It is one of fakeapi's fidelity packages. The fakeapi core
// (fieldmanager.go) keeps one Managers per server, records every HTTP
// write with it and answers apply patches; the /scale subresource
// translates owners between the Scale and the workload (scale.go). This
// package knows nothing of the server.
package apply
