// Package testserver is the test harness shared by the packages that talk
// to an API server over HTTP (rest, kubeconfig, reflector/wire): a
// throw-away PKI (NewPKI), a TLS server that records which client
// certificate it was shown (NewTLS), and a plain server that records
// every request it answers (New). Test files cannot import one another
// across packages, so what they share lives here, once.
//
// It is imported only by tests. It imports nothing of this module's, so
// that package rest's own tests (package rest, below everything else) can
// use it without an import cycle, and nothing outside the standard
// library and apimachinery's types: failures are reported through
// testing.TB.
package testserver
