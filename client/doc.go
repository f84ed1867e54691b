// Package client is the write side of a controller: "read from the lister,
// write through the client". It sends Get, List, Create, Update,
// UpdateStatus, Patch, Apply, ApplyStatus and Delete for any type registered
// in a scheme, and for *unstructured.Unstructured objects of any resource
// (ForDynamic: the dynamic client, for kinds without a Go type), over
// the same rest.Config as the informers, and returns the server's errors as
// *apierrors.StatusError so that apierrors.IsConflict, IsNotFound and the
// rest work as with client-go.
//
//	worker --lister.Get--> cache (read, free)
//	   \----client.Update--> API server --watch--> informer --> cache
//
// # Why writes go to the server
//
// The cache is a copy, shared by every reader, and the server owns the
// object. A controller reads from the lister (no request), DeepCopies,
// changes the copy and writes it here. The write carries the
// resourceVersion it was based on; if someone else wrote in between, the
// server answers Conflict, and RetryOnConflict (client-go's DefaultRetry:
// 5 tries, 10ms apart) reads again and re-applies the change. The cache
// catches up from the watch a moment later.
//
// # One mapping, one scheme
//
// For[T] finds T's resource with informer.ResourceFor, the function a
// Factory uses, by the same rule (discovery.Resolver: the Resources
// overrides, then the server's discovery, then a guess only when discovery
// cannot be read): a type is written where it is read. A type the scheme
// does not know is refused at once (ErrUnknownType), before any request. A 404 for the resource itself
// (a CRD not installed) is an *UnservedError, distinct from a 404 for one
// object, and is never retried. ForDynamic finds a resource's kind and
// scope with informer.ResourceForGVR, as informer.ForDynamic does.
//
// # Server-side apply
//
// Apply sends the fields you want to own; the server merges them, records
// ApplyOptions.FieldManager as their owner in managedFields, and refuses to
// change a field another manager owns: an *ApplyConflictError that names
// each manager and field (apierrors.IsConflict is true too). Force takes
// the fields over. A field you applied before and no longer send is
// removed. AddFinalizer and RemoveFinalizer are the other idempotent writes
// a controller needs.
//
// # The typed-struct trap
//
// Apply claims every field its body holds, and a typed Go struct holds
// more than you set: a field without omitempty is sent with its zero value,
// a number as 0 (an autoscaling/v1 HorizontalPodAutoscaler's maxReplicas),
// a pointer as null (an apps/v1 Deployment's selector), a struct as {} (a
// container's resources), and every object brings status: {} and
// creationTimestamp: null. Each such field is then yours at that value: an
// apply of an HPA in which you meant to set only minReplicas sets
// maxReplicas to 0, and an apply of an object read back from the server
// claims every field it holds, including the ones other managers set, and
// removes them the day you stop sending them. Avoid it by sending only the
// fields you own:
//
//   - build an *unstructured.Unstructured holding exactly those fields and
//     apply it with ForUnstructured (the way kubectl apply sends a file);
//   - or start each apply from a fresh, empty typed object (never from the
//     one read from the cache) and set only your fields, having checked
//     that the type's other fields are omitempty.
//
// client-go's generated "apply configurations", all pointers and
// omitempty, exist for this reason; this module has none, and the
// unstructured form does their job.
//
// # The wire
//
// Bodies are JSON, or protobuf when rest.Config.ContentType asks for it and
// the type has a protobuf form; responses are decoded by their
// Content-Type. Every response body is bounded (Config.MaxObjectBytes,
// error bodies to 64 KiB) and must decode to the expected kind. The rules
// a request shares with the informers' lists (the URL layout, the Accept
// header, the Content-Type mapping, the bounded body read, the Config's
// defaults, the rate limit, the credentials, the redirect rule, the
// decoding of error answers) are package rest's, used here through one
// rest.Client, not restated. The bearer token or token file of the Config
// is sent to the Config's host only, never along a redirect to another.
package client
