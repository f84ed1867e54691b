// Package integration holds the cross-package scenarios: the reflector, the
// queue, the cache and the handlers together, over real HTTP, against fakeapi
// (and, in integration/realapi, against a real kube-apiserver).
//
// It has no non-test code beyond this comment. Tests for a single package
// live beside that package; what lives here is every test whose claim is
// "after this failure, the whole pipeline converges to the server's state".
package integration
