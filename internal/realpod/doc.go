// Package realpod builds the pods the memory benchmarks and the compare
// command measure with: pods shaped like the ones a Deployment leaves on a
// real cluster (about 7 KB of JSON each), so that a figure per cached pod
// means what it would mean in production. Fixtures made of a name and one
// label measure the cache's bookkeeping, not the objects users cache.
//
// Pod i belongs to deployment i/Replicas of namespace i/PerNamespace mod
// Namespaces and runs on node i mod Nodes: the values that repeat across
// objects (namespaces, labels of one deployment, images, node names, owner
// references) repeat as they do on a cluster, and the ones that are unique
// (names, UIDs, IPs, container IDs) are unique.
package realpod
