// Package apiresource says where a Go type lives on a Kubernetes API server,
// for both sides of the wire: the informer and its client, which request a
// resource, and fakeapi, which serves it.
//
//	Go type --scheme--> kind (apps/v1 Deployment) --Resource--> /apis/apps/v1/namespaces/{ns}/deployments
//
// A URL names a resource by its group, version and plural ("deployments"),
// and by a namespace unless the kind is cluster-scoped (Nodes, Namespaces).
// The Go type knows none of that: the scheme gives its kind, and Resource
// adds the plural and the scope. Guess derives the plural as Kubernetes'
// own default mapping does (Pod -> pods, Policy -> policies, Endpoints ->
// endpoints) and the scope from this package's list of the built-in kinds
// that have no namespace, which is right for every built-in kind. The
// informer and its client ask the server first (package discovery's
// Resolver) and guess only when its discovery cannot be read; fakeapi
// describes its built-in resources with Guess.
//
// NewScheme is the one default scheme of the module: the Go types that the
// informer's factory can name, that reflector/wire decodes, that package
// client writes and that fakeapi serves, so that all four agree on what
// they know without being told.
//
// The package sits below everything else in the module and imports none of
// it, so that fakeapi, a test server, can use it without pulling in the
// informer.
package apiresource
