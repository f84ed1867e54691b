// Package rvorder is the one home of the rule that says when one
// resourceVersion is older than another, for every package that asks:
// the reflector (is a watch event older than the position the watch has
// reached?) and the informer's read-your-writes bookkeeping (is a write's
// version older than the newest one handed to the queue?).
//
// resourceVersions are opaque to clients in general: an aggregated API
// server may use any string. kube-apiserver writes etcd's revision as a
// decimal number, and apimachinery compares two such numbers
// (k8s.io/apimachinery/pkg/util/resourceversion.CompareResourceVersion)
// when both are well formed: digits only, no leading zero. Older asks
// apimachinery for the order, and answers "not older" wherever
// apimachinery would not compare ("", "0", an opaque string): those are
// never ordered at all.
//
// Older runs once per watch event, so it allocates nothing: it checks
// well-formedness itself before asking apimachinery, whose error for an
// opaque string would allocate, and parses nothing into an integer (a
// number of any length is compared right).
package rvorder
