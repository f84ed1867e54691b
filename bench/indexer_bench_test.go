package bench

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/seed31a95821/informer/indexer"
	"github.com/seed31a95821/informer/internal/objkey"
	"github.com/seed31a95821/informer/lister"
)

// The indexer benchmarks. Each runs our indexer.Indexer (impl=informer) and
// client-go's store (impl=client-go) on the same pods, so that
//
//	go test -run xxx -bench 'Indexer|Lister' -benchmem -count 6 | benchstat -col /impl -
//
// prints the ratios. Our Indexer has two built-in indexes, NamespaceIndex
// and LabelIndex; the label index is maintained only once something reads
// it, so "indexes=1" compares namespace index with namespace index, and
// "indexes=1+labels" compares both with a label index in use.

// podSet is a fixed population of pods, each in two versions that differ only
// in resourceVersion, like the MODIFIED events of a status update. Keys are
// "namespace/name", as both stores expect.
type podSet struct {
	keys []string
	v1   []*corev1.Pod
	v2   []*corev1.Pod
}

// makePods builds n pods spread over namespaces, with apps of 100 pods each
// (so an "app=app-N" selector matches 100 pods at any n), realistic labels,
// a node, an owner and a phase.
func makePods(n, namespaces int) *podSet {
	s := &podSet{keys: make([]string, n), v1: make([]*corev1.Pod, n), v2: make([]*corev1.Pod, n)}
	for i := range n {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:       "ns-" + strconv.Itoa(i%namespaces),
				Name:            fmt.Sprintf("pod-%07d", i),
				UID:             types.UID(fmt.Sprintf("uid-%07d", i)),
				ResourceVersion: strconv.Itoa(2 * i),
				Labels: map[string]string{
					"app":               "app-" + strconv.Itoa(i/100),
					"tier":              []string{"web", "db", "cache"}[i%3],
					"pod-template-hash": fmt.Sprintf("h%05d", i/10),
				},
				OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "rs", UID: types.UID(fmt.Sprintf("rs-%d", i/10))}},
			},
			Spec:   corev1.PodSpec{NodeName: "node-" + strconv.Itoa(i%50)},
			Status: corev1.PodStatus{Phase: corev1.PodRunning},
		}
		if namespaces == 1 {
			p.Namespace = "default"
		}
		q := p.DeepCopy()
		q.ResourceVersion = strconv.Itoa(2*i + 1)
		s.keys[i] = p.Namespace + "/" + p.Name
		s.v1[i], s.v2[i] = p, q
	}
	return s
}

// version returns the pod to write at iteration i: it alternates between
// the two versions, so every write replaces the stored object with another.
func (s *podSet) version(i int) (string, *corev1.Pod) {
	j := i % len(s.keys)
	if (i/len(s.keys))%2 == 0 {
		return s.keys[j], s.v2[j]
	}
	return s.keys[j], s.v1[j]
}

// The four extra index functions of "indexes=5", written once over pods.
var podIndexes = map[string]func(p *corev1.Pod) []string{
	"node":  func(p *corev1.Pod) []string { return []string{p.Spec.NodeName} },
	"app":   func(p *corev1.Pod) []string { return []string{p.Labels["app"]} },
	"owner": func(p *corev1.Pod) []string { return []string{string(p.OwnerReferences[0].UID)} },
	"phase": func(p *corev1.Pod) []string { return []string{string(p.Status.Phase)} },
}

func ourIndexers(extra bool) indexer.Indexers {
	if !extra {
		return nil
	}
	out := indexer.Indexers{}
	for name, f := range podIndexes {
		out[name] = func(obj runtime.Object) ([]string, error) { return f(obj.(*corev1.Pod)), nil }
	}
	return out
}

func clientGoIndexers(extra bool) cache.Indexers {
	out := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	if extra {
		for name, f := range podIndexes {
			out[name] = func(obj interface{}) ([]string, error) { return f(obj.(*corev1.Pod)), nil }
		}
	}
	return out
}

// newOurs and newClientGo load the v1 pods into a fresh store.
func newOurs(b *testing.B, s *podSet, extra bool) *indexer.Indexer {
	x := indexer.New(ourIndexers(extra))
	items := make(map[string]runtime.Object, len(s.keys))
	for i, k := range s.keys {
		items[k] = s.v1[i]
	}
	if err := x.Replace(items, "1"); err != nil {
		b.Fatal(err)
	}
	return x
}

func newClientGoStore(s *podSet, extra bool) cache.ThreadSafeStore {
	st := cache.NewThreadSafeStore(clientGoIndexers(extra), cache.Indices{})
	for i, k := range s.keys {
		st.Add(k, s.v1[i])
	}
	return st
}

func newClientGoIndexer(b *testing.B, s *podSet, extra bool) cache.Indexer {
	x := cache.NewIndexer(cache.MetaNamespaceKeyFunc, clientGoIndexers(extra))
	for _, p := range s.v1 {
		if err := x.Add(p); err != nil {
			b.Fatal(err)
		}
	}
	return x
}

// BenchmarkIndexerUpdate: one Update of a stored pod, with the store's
// indexes unchanged by it (the common case: a status update). client-go runs
// its ThreadSafeStore, which, like ours, takes the key from the caller.
// Nothing reads the store meanwhile, which was ours' best case until reads
// that return stopped freezing it; BenchmarkIndexerUpdateWithReads measures
// writes between reads.
//
//   - indexes=1: NamespaceIndex on both sides.
//   - indexes=5: both add four custom indexes (node, app, owner, phase).
//   - indexes=1+labels: NamespaceIndex and a label index on both sides (for
//     client-go an index function giving the same "key=value" values as our
//     LabelIndex, which is put in use, unsorted as a user would write it:
//     ours sorts them, which client-go's store does not need).
func BenchmarkIndexerUpdate(b *testing.B) {
	pods := makePods(10_000, 10)
	for _, tc := range []struct {
		name          string
		extra, labels bool
	}{{"indexes=1", false, false}, {"indexes=5", true, false}, {"indexes=1+labels", false, true}} {
		b.Run(tc.name+"/impl=informer", func(b *testing.B) {
			x := newOurs(b, pods, tc.extra)
			if tc.labels {
				if err := x.UseLabelIndex(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				k, p := pods.version(i)
				if err := x.Update(k, p); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		b.Run(tc.name+"/impl=client-go", func(b *testing.B) {
			idx := clientGoIndexers(tc.extra)
			if tc.labels {
				idx["labels"] = clientGoLabelIndexFunc
			}
			st := cache.NewThreadSafeStore(idx, cache.Indices{})
			for i, k := range pods.keys {
				st.Add(k, pods.v1[i])
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				k, p := pods.version(i)
				st.Update(k, p)
				i++
			}
		})
	}
}

// clientGoLabelIndexFunc files an object under "key=value" for each of its
// labels, as our LabelIndex does.
func clientGoLabelIndexFunc(obj interface{}) ([]string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(m.GetLabels()))
	for k, v := range m.GetLabels() {
		out = append(out, k+"="+v)
	}
	return out, nil
}

// BenchmarkIndexerUpdateWithReads: BenchmarkIndexerUpdate's writes with
// indexes=1, and every readEvery writes one read of a namespace (ByIndex,
// 1,000 of the 10,000 pods) on both sides. One op is one write plus its
// share of the read.
//
// BenchmarkIndexerUpdate never reads, and that is the best case for ours:
// a write edits the current version in place only while no read is in
// progress on it, and a read of many objects (List, ByIndex; not Get)
// takes mu twice to count itself in and out. Until 552b3db such a read
// froze the version, as Freeze does, and every write after it copied
// the path of trie nodes it changed. client-go's store costs the same per
// write whether anyone reads or not. So this is the comparison a
// controller whose workers list from the cache between events will see.
func BenchmarkIndexerUpdateWithReads(b *testing.B) {
	pods := makePods(10_000, 10)
	for _, every := range []int{10, 100, 1000} {
		name := fmt.Sprintf("readEvery=%d", every)
		b.Run(name+"/impl=informer", func(b *testing.B) {
			x := newOurs(b, pods, false)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if i%every == 0 {
					if objs, err := x.ByIndex(indexer.NamespaceIndex, "ns-3"); err != nil || len(objs) != 1000 {
						b.Fatal(len(objs), err)
					}
				}
				k, p := pods.version(i)
				if err := x.Update(k, p); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		b.Run(name+"/impl=client-go", func(b *testing.B) {
			st := newClientGoStore(pods, false)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if i%every == 0 {
					if objs, err := st.ByIndex(cache.NamespaceIndex, "ns-3"); err != nil || len(objs) != 1000 {
						b.Fatal(len(objs), err)
					}
				}
				k, p := pods.version(i)
				st.Update(k, p)
				i++
			}
		})
	}
}

// BenchmarkIndexerByIndex: the objects of one namespace (1,000 of 10,000).
func BenchmarkIndexerByIndex(b *testing.B) {
	pods := makePods(10_000, 10)
	b.Run("impl=informer", func(b *testing.B) {
		x := newOurs(b, pods, false)
		b.ReportAllocs()
		for b.Loop() {
			objs, err := x.ByIndex(indexer.NamespaceIndex, "ns-3")
			if err != nil || len(objs) != 1000 {
				b.Fatal(len(objs), err)
			}
		}
	})
	b.Run("impl=client-go", func(b *testing.B) {
		st := newClientGoStore(pods, false)
		b.ReportAllocs()
		for b.Loop() {
			objs, err := st.ByIndex(cache.NamespaceIndex, "ns-3")
			if err != nil || len(objs) != 1000 {
				b.Fatal(len(objs), err)
			}
		}
	})
}

// BenchmarkIndexerWritesWithReaders: how fast one writer updates 10,000 pods
// of one namespace while 0, 1 or 10 goroutines keep listing that namespace
// through a typed lister (client-go: ListAllByNamespace, what its generated
// listers call). This is the scenario of client-go's own
// BenchmarkSharedIndexInformer, without the informer around the store. Each
// writer computes the pod's key as its informer does (client-go's inside
// Indexer.Update, ours with ourKey), unlike BenchmarkIndexerUpdate, which
// hands both stores the key.
func BenchmarkIndexerWritesWithReaders(b *testing.B) {
	pods := makePods(10_000, 1)
	for _, readers := range []int{0, 1, 10} {
		b.Run(fmt.Sprintf("readers=%d/impl=informer", readers), func(b *testing.B) {
			x := newOurs(b, pods, false)
			l := lister.New[*corev1.Pod](x, lister.Options{})
			read := func() int {
				got, err := l.Namespace("default").List(labels.Everything())
				if err != nil {
					panic(err)
				}
				return len(got)
			}
			write := func(i int) {
				_, p := pods.version(i)
				if err := x.Update(ourKey(x, p), p); err != nil {
					panic(err)
				}
			}
			measureWrites(b, readers, read, write)
		})
		b.Run(fmt.Sprintf("readers=%d/impl=client-go", readers), func(b *testing.B) {
			x := newClientGoIndexer(b, pods, false)
			read := func() int {
				var got []*corev1.Pod
				err := cache.ListAllByNamespace(x, "default", labels.Everything(), func(m interface{}) {
					got = append(got, m.(*corev1.Pod))
				})
				if err != nil {
					panic(err)
				}
				return len(got)
			}
			write := func(i int) {
				_, p := pods.version(i)
				if err := x.Update(p); err != nil {
					panic(err)
				}
			}
			measureWrites(b, readers, read, write)
		})
	}
}

// BenchmarkIndexerWritesWithPacedReaders: BenchmarkIndexerWritesWithReaders
// with its 10 readers at a fixed rate (each lists the namespace every
// pacedEvery, 200 lists/s in all) instead of back to back. Flat-out
// readers on 2 cores measure how long client-go's writer starves behind its
// read lock, which swings by 10x from run to run; paced readers leave the
// machine room for the writer, and the figures are the writer's
// throughput and each read's p99 (from its call to its return, waiting
// for the lock included).
//
// At -benchtime 1s a run takes about 200 reads, so read-p99-us is its
// second or third slowest read, and on 2 shared cores with a writer that
// never blocks (ours never waits for a reader) the slowest reads are those
// the scheduler kept off the CPU: in go tool trace they spend most of their
// time runnable but not running, or waiting for a writer that is, and a
// reader's wake-up after its tick,
// which comes before the read and is not timed, has a p99 of the same size.
// read-p50-us, the typical read, is reported beside it so that a p99 from
// the scheduler can be told from a slow read; reads is the sample count.
func BenchmarkIndexerWritesWithPacedReaders(b *testing.B) {
	pods := makePods(10_000, 1)
	const readers = 10
	b.Run(fmt.Sprintf("readers=%d/impl=informer", readers), func(b *testing.B) {
		x := newOurs(b, pods, false)
		l := lister.New[*corev1.Pod](x, lister.Options{})
		read := func() int {
			got, err := l.Namespace("default").List(labels.Everything())
			if err != nil {
				panic(err)
			}
			return len(got)
		}
		write := func(i int) {
			_, p := pods.version(i)
			if err := x.Update(ourKey(x, p), p); err != nil {
				panic(err)
			}
		}
		measurePaced(b, readers, read, write)
	})
	b.Run(fmt.Sprintf("readers=%d/impl=client-go", readers), func(b *testing.B) {
		x := newClientGoIndexer(b, pods, false)
		read := func() int {
			var got []*corev1.Pod
			err := cache.ListAllByNamespace(x, "default", labels.Everything(), func(m interface{}) {
				got = append(got, m.(*corev1.Pod))
			})
			if err != nil {
				panic(err)
			}
			return len(got)
		}
		write := func(i int) {
			_, p := pods.version(i)
			if err := x.Update(p); err != nil {
				panic(err)
			}
		}
		measurePaced(b, readers, read, write)
	})
}

// pacedEvery is how often each paced reader lists.
const pacedEvery = 50 * time.Millisecond

// measurePaced runs write in the benchmark loop while `readers` goroutines
// each call read once every pacedEvery, and reports writes/s, the p99 and
// p50 of the reads' durations, and how many reads there were. The clock starts once every reader has read
// once.
func measurePaced(b *testing.B, readers int, read func() int, write func(i int)) {
	var (
		stop atomic.Bool
		mu   sync.Mutex // guards took
		took []time.Duration
		wg   sync.WaitGroup
		// ready: every reader has read once, so that even a one-write
		// run has reads to report.
		ready sync.WaitGroup
	)
	ready.Add(readers)
	for r := range readers {
		wg.Go(func() {
			// Spread the readers over the period, not all at once.
			time.Sleep(pacedEvery * time.Duration(r) / time.Duration(readers))
			t := time.NewTicker(pacedEvery)
			defer t.Stop()
			var mine []time.Duration
			for !stop.Load() {
				start := time.Now()
				if read() != 10_000 {
					panic("a reader saw a partial namespace")
				}
				mine = append(mine, time.Since(start))
				if len(mine) == 1 {
					ready.Done()
				}
				<-t.C
			}
			mu.Lock()
			took = append(took, mine...)
			mu.Unlock()
		})
	}
	ready.Wait()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		write(i)
		i++
	}
	b.StopTimer()
	b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "writes/s")
	stop.Store(true)
	wg.Wait()
	slices.Sort(took)
	quantile := func(q float64) time.Duration {
		return took[max(int(math.Ceil(q*float64(len(took))))-1, 0)]
	}
	b.ReportMetric(float64(quantile(0.99).Microseconds()), "read-p99-us")
	b.ReportMetric(float64(quantile(0.50).Microseconds()), "read-p50-us")
	b.ReportMetric(float64(len(took)), "reads")
}

// ourKey computes obj's key as our informer's key function does before it
// writes to the cache: the namespace/name bytes, then the cache's own string
// for them (a lookup in the cache). client-go's Indexer.Update computes its
// key from the object too (MetaNamespaceKeyFunc, which allocates). Handing
// ours a key computed before the clock would time that work on client-go's
// side only: with no readers, about half of its write.
func ourKey(x *indexer.Indexer, obj runtime.Object) string {
	var buf [128]byte
	b, err := objkey.Append(buf[:0], obj)
	if err != nil {
		panic(err)
	}
	if k, ok := x.InternKey(b); ok {
		return k
	}
	return string(b)
}

// measureWrites runs write in the benchmark loop while `readers` goroutines
// call read back to back, and reports writes/s and reads/s. The readers are
// started before the clock and stopped (and waited for) after it.
func measureWrites(b *testing.B, readers int, read func() int, write func(i int)) {
	var (
		stop  atomic.Bool
		reads atomic.Int64
		wg    sync.WaitGroup
	)
	for range readers {
		wg.Go(func() {
			for !stop.Load() {
				if read() != 10_000 {
					panic("a reader saw a partial namespace")
				}
				reads.Add(1)
			}
		})
	}
	b.ReportAllocs()
	reads.Store(0)
	i := 0
	for b.Loop() {
		write(i)
		i++
	}
	b.StopTimer()
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(i)/secs, "writes/s")
	b.ReportMetric(float64(reads.Load())/secs, "reads/s")
	stop.Store(true)
	wg.Wait()
}
