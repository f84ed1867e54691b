package lister

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer/indexer"
)

// The package's own benchmarks; bench/ runs the same scenarios side by side
// with client-go:
//
//	go test ./lister -run xxx -bench . -benchmem

// benchCache returns an indexer of n pods over namespaces; an "app=app-N"
// label matches 100 pods at every n. It also returns the pods, keyed.
func benchCache(b *testing.B, n, namespaces int) (*indexer.Indexer, []string, []*corev1.Pod) {
	items := make(map[string]runtime.Object, n)
	keys, pods := make([]string, n), make([]*corev1.Pod, n)
	for i := range n {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Namespace:       "ns-" + strconv.Itoa(i%namespaces),
			Name:            fmt.Sprintf("pod-%07d", i),
			ResourceVersion: strconv.Itoa(i),
			Labels:          map[string]string{"app": "app-" + strconv.Itoa(i/100), "tier": "web"},
		}}
		keys[i], pods[i] = p.Namespace+"/"+p.Name, p
		items[keys[i]] = p
	}
	x := indexer.New(nil)
	if err := x.Replace(items, "1"); err != nil {
		b.Fatal(err)
	}
	return x, keys, pods
}

// BenchmarkListSelector: List(app=app-7), 100 matches, at 1k, 10k and 100k
// objects. The cost should not grow with the cache.
func BenchmarkListSelector(b *testing.B) {
	selector := labels.SelectorFromSet(labels.Set{"app": "app-7"})
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			x, _, _ := benchCache(b, n, 10)
			if err := x.UseLabelIndex(); err != nil { // a one-time cost, not measured here
				b.Fatal(err)
			}
			l := New[*corev1.Pod](x, Options{})
			b.ReportAllocs()
			for b.Loop() {
				got, err := l.List(selector)
				if err != nil || len(got) != 100 {
					b.Fatal(len(got), err)
				}
			}
		})
	}
}

// BenchmarkWritesWithNamespaceReaders: a writer updates 10,000 pods of one
// namespace while 0, 1 or 10 goroutines list that namespace back to back.
// Reported as writes/s (and reads/s): readers must not slow the writer down.
func BenchmarkWritesWithNamespaceReaders(b *testing.B) {
	for _, readers := range []int{0, 1, 10} {
		b.Run(fmt.Sprintf("readers=%d", readers), func(b *testing.B) {
			x, keys, pods := benchCache(b, 10_000, 1)
			l := New[*corev1.Pod](x, Options{})
			var (
				stop  atomic.Bool
				reads atomic.Int64
				wg    sync.WaitGroup
			)
			for range readers {
				wg.Go(func() {
					for !stop.Load() {
						got, err := l.Namespace("ns-0").List(labels.Everything())
						if err != nil || len(got) != len(keys) {
							panic(fmt.Sprint(len(got), err))
						}
						reads.Add(1)
					}
				})
			}
			b.ReportAllocs()
			reads.Store(0)
			i := 0
			for b.Loop() {
				j := i % len(keys)
				if err := x.Update(keys[j], pods[j]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			secs := b.Elapsed().Seconds()
			b.ReportMetric(float64(i)/secs, "writes/s")
			b.ReportMetric(float64(reads.Load())/secs, "reads/s")
			stop.Store(true)
			wg.Wait()
		})
	}
}
