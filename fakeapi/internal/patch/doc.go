// Package patch decodes and applies the patch types of a Kubernetes PATCH
// request, as kube-apiserver does: JSON merge patch (RFC 7386), strategic
// merge patch, and JSON patch (RFC 6902), named by the request's
// Content-Type.
//
// # What it imitates
//
// kubectl patch, kubectl label and kubectl set image send strategic merge
// patches for built-in types (lists such as containers merge by their key,
// as the Go types' patchStrategy and patchMergeKey tags say) and merge
// patches for custom resources, which have no Go type: a strategic merge
// patch of one gets the real server's 415. Errors carry the real codes: 400
// for a malformed patch, 422 for one that does not apply, 413 above the
// real server's 10,000 JSON patch operations.
//
// A hostile patch is bounded beyond the body limit every request has: its
// nesting (MaxDepth, checked in one pass before anything recurses), its
// copy operations (each can double the document), and the size of the
// patched document.
//
// # Its place
//
// It is one of fakeapi's fidelity packages. Decode runs outside the
// server's lock and returns a Func; the fakeapi core (patchverb.go) runs
// the Func on the stored object inside its critical section, so that a
// patch always applies to the latest state, and then treats the result as
// an update. Server-side apply, the fourth patch type (MediaApply), is
// fakeapi/apply's. This package knows nothing of the server.
package patch
