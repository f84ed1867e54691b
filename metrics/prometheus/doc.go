// Package prometheus feeds an informer metrics.Registry into a
// prometheus/client_golang registry, for programs that already serve one.
//
// It lives in a module of its own, as bench/ does, so that the informer's
// main module never depends on client_golang: a program that does not use
// Prometheus's Go client serves the same figures with
// metrics.Registry.Handler instead. Either way the figures come from one
// place, the metrics.Registry the library's parts were given; this package
// only translates them when Prometheus gathers.
package prometheus
