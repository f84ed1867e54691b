// Package realapi starts a real kube-apiserver, backed by a real etcd, for integration tests.
//
// # Why a real server
//
// The fakeapi package speaks the Kubernetes list/watch protocol, but a test against it can only
// show that the informer agrees with our own reading of that protocol. Controller authors will
// point the informer at real clusters, so the reflector and the informer are also proved against
// the real thing: the same kube-apiserver binary a cluster runs, talking to the same etcd.
//
// # Where the servers come from
//
// Nothing prebuilt can be downloaded on the machines this project runs on, but the Go module
// proxy serves the source of both servers. scripts/real-apiserver.sh builds them once, in a
// scratch module outside this repository, and caches the binaries under
// ${XDG_CACHE_HOME:-$HOME/.cache}/informer-realapi/<versions>/bin. The first build takes more
// than ten minutes on two cores; later runs find the cache and start a cluster in seconds.
// Because a cold build outlasts go test's default 10-minute timeout, CI runs
// "scripts/real-apiserver.sh build" before go test.
//
// # What a test gets
//
// Start (or StartWith) runs the script, waits until /readyz answers, and returns a Cluster:
// the server URL, a bearer token in group system:masters, the CA that signed the server's
// self-signed serving certificate, a kubeconfig holding all three, and etcd's client URL.
// TLS verification always stays on: clients trust Cluster.CAFile, never skip verification.
// The cluster is stopped, by PID, when the test ends; a watchdog stops it as well if the test
// binary dies first.
//
// StartAll starts several clusters at once (say one with the watch cache and one without), in
// about the wall time of one start; integration's TestConformance uses it. Launch is the form
// for TestMain, which has no testing.TB.
//
// Under go test -short, Start skips the test. In every other case a cluster that cannot be
// built or started fails the test with the script's own message: it is never skipped silently.
//
// # Forcing 410 Gone
//
// A watch from a resourceVersion that etcd has compacted away gets 410 Gone. With the watch
// cache on, kube-apiserver answers most watches from memory, so tests that need the 410 from
// etcd start the server with Options.DisableWatchCache and then call Cluster.EtcdCompact,
// which compacts etcd through its HTTP gateway.
package realapi
