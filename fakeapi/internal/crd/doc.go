// Package crd reads CustomResourceDefinitions the way kube-apiserver's
// apiextensions server does, for the parts a test server needs.
//
// # What it imitates
//
// Creating a CRD makes the real server serve its custom resource: in
// discovery, at its URLs, with the status subresource and the
// additionalPrinterColumns of its storage version, and with its schema in
// /openapi/v3 for kubectl explain. Before that it validates the definition
// (Definition.Validate: the rules clients meet first), and moments after
// the create its controllers mark the CRD NamesAccepted and Established
// (SetStatus), which kubectl wait --for=condition=Established waits for.
// OpenAPIDoc builds the group version's OpenAPI v3 document as the real
// server publishes it.
//
// Not reproduced: validation, pruning and defaulting of custom objects
// against the CRD's schema (the schema is published, not enforced),
// conversion between versions (only the storage version is served), the
// scale subresource of custom resources, and changes to a served CRD other
// than its deletion.
//
// The Go types of a CRD live in k8s.io/apiextensions-apiserver, which this
// module does not depend on: Definition is a small view of the JSON.
//
// # Its place
//
// It is one of fakeapi's fidelity packages. The fakeapi core
// (customresources.go) stores CRDs like any object and, after a write to
// one, asks this package what to serve (Definition.Served) and changes its
// registry; custom objects are stored as unstructured.Unstructured. This
// package knows nothing of the server.
package crd
