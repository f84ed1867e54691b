// Package bench measures informer against client-go, side by side, in one run.
//
// It is a separate Go module so that k8s.io/client-go, the thing we compare
// against, never becomes a dependency of the main module. Every benchmark
// here has a twin: one sub-benchmark runs our code, another runs client-go's
// (for the queue, DeltaFIFO, RealFIFO or both) on the same input, so that
// `go test -bench . -benchmem` followed by benchstat prints ratios measured
// on the same machine in the same minute.
// The pipeline benchmark has a third sub-benchmark, impl=floor, which runs
// no informer at all: it shows what the benchmark itself costs.
//
// The tests in this module (not only the benchmarks) also prove
// interoperability: client-go's own informers and clientset run against
// fakeapi, our in-process API server.
package bench
