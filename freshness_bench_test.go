package informer

import (
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// BenchmarkHanded is the read-your-writes bookkeeping of one write that
// the queue applied at once (inline.go): the write's resourceVersion is
// recorded, the queue is found drained, and the applied resourceVersion
// moves. The watch of a busy informer pays it for every event.
func BenchmarkHanded(b *testing.B) {
	s := newInformer[*corev1.Pod](Options{Name: "pods"}, allFastPaths())
	rvs := make([]string, 1024)
	for i := range rvs {
		rvs[i] = strconv.Itoa(1_000_000 + i)
	}
	i := 0
	for b.Loop() {
		s.handed(rvs[i%len(rvs)], i%len(rvs) == 0)
		i++
	}
	if s.AppliedResourceVersion() == "" {
		b.Fatal("nothing applied")
	}
}
