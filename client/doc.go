// Package client is the write side of a controller: "read from the lister,
// write through the client". It sends Get, List, Create, Update,
// UpdateStatus, Patch, Apply, ApplyStatus and Delete for any type registered
// in a scheme (and Apply for *unstructured.Unstructured), over
// the same wire.Config as the informers, and returns the server's errors as
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
// Factory uses, with the same Resources overrides: a type is written where
// it is read. A type the scheme does not know is refused at once
// (ErrUnknownType), before any request. A 404 for the resource itself
// (a CRD not installed) is an *UnservedError, distinct from a 404 for one
// object, and is never retried.
//
// # The wire
//
// Bodies are JSON, or protobuf when wire.Config.ContentType asks for it and
// the type has a protobuf form; responses are decoded by their
// Content-Type. Every response body is bounded (Config.MaxObjectBytes,
// error bodies to 64 KiB) and must decode to the expected kind. The rules
// a request shares with the informers' lists (the URL layout, the Accept
// header, the Content-Type mapping, the bounded body read, the Config's
// defaults) are reflector/wire's (request.go), used here, not restated. The bearer
// token or token file of the Config is sent to the Config's host only,
// never along a redirect to another.
package client
