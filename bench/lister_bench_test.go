package bench

import (
	"fmt"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/seed31a95821/informer/lister"
)

// BenchmarkListerSelector: List with an equality label selector (app=app-7,
// which matches 100 pods at every size) over 1k, 10k and 100k pods in 10
// namespaces. client-go's generated listers call cache.ListAll, which tests
// every object against the selector; ours reads the app=app-7 bucket of the
// label index. Both return typed []*corev1.Pod. Our label index is put in use
// before the clock starts: building it is a one-time cost, measured by the
// indexer package's BenchmarkUseLabelIndex.
func BenchmarkListerSelector(b *testing.B) {
	selector := labels.SelectorFromSet(labels.Set{"app": "app-7"})
	for _, n := range []int{1_000, 10_000, 100_000} {
		// Build the pods once per size, and each store from them once: the
		// 100k case must stay affordable on a small machine.
		pods := makePods(n, 10)
		b.Run(fmt.Sprintf("objects=%d/impl=informer", n), func(b *testing.B) {
			x := newOurs(b, pods, false)
			if err := x.UseLabelIndex(); err != nil {
				b.Fatal(err)
			}
			l := lister.New[*corev1.Pod](x, lister.Options{})
			b.ReportAllocs()
			for b.Loop() {
				got, err := l.List(selector)
				if err != nil || len(got) != 100 {
					b.Fatal(len(got), err)
				}
			}
		})
		b.Run(fmt.Sprintf("objects=%d/impl=client-go", n), func(b *testing.B) {
			x := newClientGoIndexer(b, pods, false)
			b.ReportAllocs()
			for b.Loop() {
				var got []*corev1.Pod
				err := cache.ListAll(x, selector, func(m interface{}) {
					got = append(got, m.(*corev1.Pod))
				})
				if err != nil || len(got) != 100 {
					b.Fatal(len(got), err)
				}
			}
		})
	}
}

// BenchmarkListerSelectorIndexed: BenchmarkListerSelector's List over 100k
// pods with an index on both sides: client-go's indexer is given a label
// index function (clientGoLabelIndexFunc, the "key=value" values our
// LabelIndex files under) and read with ByIndex, as a client-go user who
// needs the speed writes it. BenchmarkListerSelector's client-go side is
// the generated lister, a full scan; this is the fair comparison of
// the lookup itself. The index's own cost is BenchmarkLabelIndexBuild's.
func BenchmarkListerSelectorIndexed(b *testing.B) {
	const n = 100_000
	selector := labels.SelectorFromSet(labels.Set{"app": "app-7"})
	pods := makePods(n, 10)
	b.Run(fmt.Sprintf("objects=%d/impl=informer", n), func(b *testing.B) {
		x := newOurs(b, pods, false)
		if err := x.UseLabelIndex(); err != nil {
			b.Fatal(err)
		}
		l := lister.New[*corev1.Pod](x, lister.Options{})
		b.ReportAllocs()
		for b.Loop() {
			got, err := l.List(selector)
			if err != nil || len(got) != 100 {
				b.Fatal(len(got), err)
			}
		}
	})
	b.Run(fmt.Sprintf("objects=%d/impl=client-go", n), func(b *testing.B) {
		x := newClientGoIndexer(b, pods, false)
		if err := x.AddIndexers(cache.Indexers{"labels": clientGoLabelIndexFunc}); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			objs, err := x.ByIndex("labels", "app=app-7")
			got := make([]*corev1.Pod, 0, len(objs))
			for _, o := range objs {
				got = append(got, o.(*corev1.Pod))
			}
			if err != nil || len(got) != 100 {
				b.Fatal(len(got), err)
			}
		}
	})
}

// BenchmarkLabelIndexBuild: what the label index costs, built over 100k
// stored pods: ours by UseLabelIndex (a lister's first equality-selector
// List calls it), client-go's by AddIndexers with clientGoLabelIndexFunc on
// a populated indexer. One op is one build; index-B/pod is the heap the
// index keeps, after a collection, per pod.
func BenchmarkLabelIndexBuild(b *testing.B) {
	const n = 100_000
	pods := makePods(n, 10)
	b.Run(fmt.Sprintf("objects=%d/impl=informer", n), func(b *testing.B) {
		reportIndexHeap(b, n, func() (build func()) {
			x := newOurs(b, pods, false)
			return func() {
				if err := x.UseLabelIndex(); err != nil {
					b.Fatal(err)
				}
				keep = x
			}
		})
	})
	b.Run(fmt.Sprintf("objects=%d/impl=client-go", n), func(b *testing.B) {
		reportIndexHeap(b, n, func() (build func()) {
			x := newClientGoIndexer(b, pods, false)
			return func() {
				if err := x.AddIndexers(cache.Indexers{"labels": clientGoLabelIndexFunc}); err != nil {
					b.Fatal(err)
				}
				keep = x
			}
		})
	})
}

// keep holds the last store built, so that it is live when the heap is
// measured after its index is.
var keep any

// reportIndexHeap times build, made by setup with the clock stopped, and
// reports the heap it left per pod.
func reportIndexHeap(b *testing.B, n int, setup func() (build func())) {
	var live uint64
	for b.Loop() {
		b.StopTimer()
		keep = nil
		build := setup()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		b.StartTimer()
		build()
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&after)
		live += after.HeapAlloc - min(before.HeapAlloc, after.HeapAlloc)
		b.StartTimer()
	}
	keep = nil
	b.ReportMetric(float64(live)/float64(b.N)/float64(n), "index-B/pod")
}

// BenchmarkListerNamespace: the whole of one namespace (1,000 of 10,000
// pods) with labels.Everything(), the read of BenchmarkIndexerWritesWithReaders,
// here without a writer. client-go: ListAllByNamespace.
func BenchmarkListerNamespace(b *testing.B) {
	pods := makePods(10_000, 10)
	b.Run("impl=informer", func(b *testing.B) {
		l := lister.New[*corev1.Pod](newOurs(b, pods, false), lister.Options{})
		b.ReportAllocs()
		for b.Loop() {
			got, err := l.Namespace("ns-3").List(labels.Everything())
			if err != nil || len(got) != 1000 {
				b.Fatal(len(got), err)
			}
		}
	})
	b.Run("impl=client-go", func(b *testing.B) {
		x := newClientGoIndexer(b, pods, false)
		b.ReportAllocs()
		for b.Loop() {
			var got []*corev1.Pod
			err := cache.ListAllByNamespace(x, "ns-3", labels.Everything(), func(m interface{}) {
				got = append(got, m.(*corev1.Pod))
			})
			if err != nil || len(got) != 1000 {
				b.Fatal(len(got), err)
			}
		}
	})
}
