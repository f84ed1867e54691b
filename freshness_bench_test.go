package informer

import (
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkHanded is the read-your-writes bookkeeping of one write that
// the queue applied at once (inline.go): the write's resourceVersion is
// recorded and stamped; with nobody waiting, the look at the queue is left
// to the next reader (the check after the loop). The watch of a busy
// informer pays it for every event.
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

// BenchmarkStoreWrite is what a watch event costs the informer from the
// reflector's call to its store (syncWatchingStore.Update) on: the key,
// the queue, which finds itself idle and applies the event at once
// (inline.go) to the cache, then the read-your-writes bookkeeping. The
// informer has no handlers; each event updates one of 4096 cached pods in
// turn, with a newer resourceVersion (numbers, as a real server's; they go
// back once every 65536 events).
func BenchmarkStoreWrite(b *testing.B) {
	s := newInformer[*corev1.Pod](Options{Name: "pods"}, allFastPaths())
	store := syncWatchingStore{Queue: s.queue, informer: s}
	pods := make([]*corev1.Pod, 4096)
	for i := range pods {
		pods[i] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns-" + strconv.Itoa(i%10), Name: "web-7d9f8b6c5-" + strconv.Itoa(i),
			ResourceVersion: strconv.Itoa(1_000_000 + i),
		}}
		if err := store.Add(pods[i]); err != nil {
			b.Fatal(err)
		}
	}
	rvs := make([]string, 1<<16)
	for i := range rvs {
		rvs[i] = strconv.Itoa(2_000_000 + i)
	}
	i := 0
	for b.Loop() {
		p := pods[i%len(pods)]
		p.ResourceVersion = rvs[i%len(rvs)]
		if err := store.Update(p); err != nil {
			b.Fatal(err)
		}
		i++
	}
	if s.AppliedResourceVersion() == "" {
		b.Fatal("nothing applied")
	}
}
