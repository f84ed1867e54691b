package informer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	kruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/internal/realobj"
	"github.com/seed31a95821/informer/internal/realpod"
	"github.com/seed31a95821/informer/reflector"
	"github.com/seed31a95821/informer/rest"
)

// The cache shares repeated strings (decode-time interning in
// reflector/wire) and repeated maps and byte slices (internal/share)
// between objects. What a lister returns must not change: typed objects,
// equal to what the server holds, in both encodings.
func TestListerReturnsWhatTheServerHoldsWhileSharing(t *testing.T) {
	for _, ct := range []string{rest.ContentTypeJSON, rest.ContentTypeProtobuf} {
		t.Run(ct, func(t *testing.T) {
			var pods []kruntime.Object
			for i := range 3 * realpod.Replicas {
				pods = append(pods, realpod.New(i))
			}
			e := newEnv(t, informer.FactoryOptions{}, pods...)
			e.factory = informer.NewFactory(rest.Config{Host: e.srv.URL(), ContentType: ct}, informer.FactoryOptions{})
			t.Cleanup(e.factory.Shutdown)
			inf, err := informer.For[*corev1.Pod](e.factory)
			require.NoError(t, err)
			e.start(t)

			stored := serverPods(t, e.srv)
			require.Len(t, stored, len(pods))
			for i := range stored {
				want := &stored[i]
				got, err := inf.Lister().Namespace(want.Namespace).Get(want.Name)
				require.NoError(t, err)
				want.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
				if !equality.Semantic.DeepEqual(want, got) {
					require.Equal(t, want, got, "cached %s differs from the server's", want.Name)
				}
			}

			a := lookup(t, inf, realpod.New(0))
			b := lookup(t, inf, realpod.New(1))
			assert.Equal(t, reflect.ValueOf(a.Spec.Containers[0].Resources.Limits).Pointer(),
				reflect.ValueOf(b.Spec.Containers[0].Resources.Limits).Pointer(), "equal resource lists are one map")
			assert.Same(t, unsafe.StringData(a.Spec.Containers[1].Image), unsafe.StringData(b.Spec.Containers[1].Image), "interned strings")
			c := lookup(t, inf, realpod.New(realpod.Replicas))
			assert.NotEqual(t, reflect.ValueOf(a.Labels).Pointer(), reflect.ValueOf(c.Labels).Pointer(), "different labels stay apart")
			assert.NotEqual(t, a.Labels, c.Labels)
		})
	}
}

func lookup(t *testing.T, inf *informer.SharedInformer[*corev1.Pod], p *corev1.Pod) *corev1.Pod {
	t.Helper()
	got, err := inf.Lister().Namespace(p.Namespace).Get(p.Name)
	require.NoError(t, err)
	return got
}

// BenchmarkCachedPodHeap syncs an informer on n realistic pods (about 7 KB
// of JSON each), updates every pod once in random order as a kubelet does
// after a container restart, and reports the heap the informer retains
// per cached pod once synced (B/pod) and after the churn (B/pod-churned):
// the figures docs/benchmarks.md compares with client-go's
// (bench/cmd/compare). Two populations: pods in replica sets of ten
// (realpod.New), and the same with 30% of the pods from a template of their
// own (realpod.Mixed).
//
//	go test -run '^$' -bench CachedPodHeap -benchtime 1x .
func BenchmarkCachedPodHeap(b *testing.B) {
	const n = 5000
	for _, pop := range []struct {
		name string
		pod  func(int) *corev1.Pod
	}{{"replicasets", realpod.New}, {"unique30", realpod.Mixed}} {
		srv, err := fakeapi.NewServer(fakeapi.Options{})
		require.NoError(b, err)
		for i := range n {
			_, err := srv.Create(pop.pod(i))
			require.NoError(b, err)
		}
		churn := func(i, round int) kruntime.Object {
			p := realpod.Restarted(pop.pod(i), i, round, time.Now())
			p.Annotations["bench.informer/written"] = fmt.Sprint(time.Now().UnixNano())
			return p
		}
		for _, ct := range []string{rest.ContentTypeJSON, rest.ContentTypeProtobuf} {
			b.Run(pop.name+"/"+ct[len("application/"):], func(b *testing.B) {
				benchCachedHeap[*corev1.Pod](b, srv, ct, n, churn, "B/pod")
			})
		}
		srv.Close()
	}
}

// BenchmarkCachedObjectHeap is BenchmarkCachedPodHeap for the other kinds
// a cluster holds many of (internal/realobj): the heap an informer retains
// per cached object once synced, and after every object was written once
// in random order.
//
//	go test -run '^$' -bench CachedObjectHeap -benchtime 1x .
func BenchmarkCachedObjectHeap(b *testing.B) {
	const n = 2000
	run := func(name string, obj func(int) kruntime.Object, bench func(*testing.B, *fakeapi.Server, func(int, int) kruntime.Object)) {
		srv, err := fakeapi.NewServer(fakeapi.Options{})
		require.NoError(b, err)
		defer srv.Close()
		for i := range n {
			_, err := srv.Create(obj(i))
			require.NoError(b, err)
		}
		churn := func(i, round int) kruntime.Object { return realobj.Touch(obj(i), round) }
		b.Run(name, func(b *testing.B) { bench(b, srv, churn) })
	}
	const ct = rest.ContentTypeProtobuf
	run("configmaps", func(i int) kruntime.Object { return realobj.ConfigMap(i) }, func(b *testing.B, srv *fakeapi.Server, churn func(int, int) kruntime.Object) {
		benchCachedHeap[*corev1.ConfigMap](b, srv, ct, n, churn, "B/obj")
	})
	run("secrets", func(i int) kruntime.Object { return realobj.Secret(i) }, func(b *testing.B, srv *fakeapi.Server, churn func(int, int) kruntime.Object) {
		benchCachedHeap[*corev1.Secret](b, srv, ct, n, churn, "B/obj")
	})
	run("deployments", func(i int) kruntime.Object { return realobj.Deployment(i) }, func(b *testing.B, srv *fakeapi.Server, churn func(int, int) kruntime.Object) {
		benchCachedHeap[*appsv1.Deployment](b, srv, ct, n, churn, "B/obj")
	})
	run("replicasets", func(i int) kruntime.Object { return realobj.ReplicaSet(i) }, func(b *testing.B, srv *fakeapi.Server, churn func(int, int) kruntime.Object) {
		benchCachedHeap[*appsv1.ReplicaSet](b, srv, ct, n, churn, "B/obj")
	})
	run("nodes", func(i int) kruntime.Object { return realobj.Node(i) }, func(b *testing.B, srv *fakeapi.Server, churn func(int, int) kruntime.Object) {
		benchCachedHeap[*corev1.Node](b, srv, ct, n, churn, "B/obj")
	})
}

// benchCachedHeap reports cachedHeap's two figures in unit and unit
// "-churned"; each iteration churns with a round of its own.
func benchCachedHeap[T kruntime.Object](b *testing.B, srv *fakeapi.Server, ct string, n int, churn func(i, round int) kruntime.Object, unit string) {
	var synced, churned float64
	round := 0
	for b.Loop() {
		synced, churned = cachedHeap[T](b, srv, ct, n, churn, round)
		round++
	}
	b.ReportMetric(synced, unit)
	b.ReportMetric(churned, unit+"-churned")
}

// cachedHeap syncs an informer of T on srv's n objects and returns the
// heap it retains per object; then writes every object once, in random
// order, with churn(i, round), waits until the cache holds every write,
// and returns the heap it retains per object then. The second figure is
// the heap with the informer less the heap once it is shut down: the
// server, in this process too, grew with the writes.
func cachedHeap[T kruntime.Object](b *testing.B, srv *fakeapi.Server, ct string, n int, churn func(i, round int) kruntime.Object, round int) (synced, churned float64) {
	before := heapAfterGC()
	var with int64
	func() { // the informer lives in here; once it returns, nothing holds it
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		f := informer.NewFactory(rest.Config{Host: srv.URL(), ContentType: ct}, informer.FactoryOptions{})
		defer f.Shutdown()
		inf, err := informer.For[T](f)
		require.NoError(b, err)
		f.Start(ctx)
		for name, ok := range f.WaitForCacheSync(ctx) {
			require.True(b, ok, "%s did not sync", name)
		}
		require.Equal(b, n, len(inf.Indexer().List()), "cached objects")
		synced = float64(heapAfterGC()-before) / float64(n)

		for _, i := range realpod.ChurnOrder(n, round) {
			_, err := srv.Update(churn(i, round))
			require.NoError(b, err)
		}
		want := fmt.Sprint(round)
		require.Eventually(b, func() bool {
			for _, o := range inf.Indexer().List() {
				m, err := meta.Accessor(o)
				if err != nil || m.GetAnnotations()[realobj.RoundAnnotation] != want {
					return false
				}
			}
			return true
		}, time.Minute, 10*time.Millisecond, "the cache did not see every write")
		with = heapAfterGC()
	}()
	// The HTTP transport's connection goroutines may hold the last
	// request's context, and through it the informer, a moment after
	// Shutdown: wait for at least half of the cache to be released.
	without := heapAfterGC()
	for deadline := time.Now().Add(10 * time.Second); float64(with-without) < synced*float64(n)/2 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		without = heapAfterGC()
	}
	require.Greater(b, float64(with-without), synced*float64(n)/2, "the informer was not released after Shutdown")
	churned = float64(with-without) / float64(n)
	return synced, churned
}

func heapAfterGC() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// serverPods reads every pod the plain way: one JSON list, decoded by
// encoding/json, nothing shared.
func serverPods(t *testing.T, srv *fakeapi.Server) []corev1.Pod {
	t.Helper()
	resp, err := http.Get(srv.URL() + "/api/v1/pods")
	require.NoError(t, err)
	defer resp.Body.Close()
	var list corev1.PodList
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&list))
	return list.Items
}

// A relist forced by a 410 finds every pod unchanged: the cache must keep
// the objects it has (internal/reuse) instead of a second decoded copy,
// through a paged List and through WatchList, in both encodings.
func TestRelistKeepsTheCachedObjects(t *testing.T) {
	for _, ct := range []string{rest.ContentTypeJSON, rest.ContentTypeProtobuf} {
		for _, mode := range []reflector.WatchListMode{reflector.WatchListOff, reflector.WatchListOn} {
			t.Run(fmt.Sprintf("%s/%v", ct, mode), func(t *testing.T) { relistKeepsObjects(t, ct, mode) })
		}
	}
}

func relistKeepsObjects(t *testing.T, ct string, mode reflector.WatchListMode) {
	var pods []kruntime.Object
	for i := range 25 {
		pods = append(pods, realpod.New(i))
	}
	e := newEnv(t, informer.FactoryOptions{}, pods...)
	opts := informer.FactoryOptions{}
	opts.Informer.Reflector.WatchList = mode
	opts.Informer.Reflector.PageSize = 10
	opts.Informer.Reflector.Backoff = fastRetry
	e.factory = informer.NewFactory(rest.Config{Host: e.srv.URL(), ContentType: ct}, opts)
	t.Cleanup(e.factory.Shutdown)
	inf, err := informer.For[*corev1.Pod](e.factory)
	require.NoError(t, err)
	e.start(t)
	before := map[string]kruntime.Object{}
	for _, o := range inf.Indexer().List() {
		p := o.(*corev1.Pod)
		before[p.Namespace+"/"+p.Name] = o
	}
	require.Len(t, before, len(pods))

	e.srv.Faults().FailNext(fakeapi.Failure{Verb: "watch", Resource: "pods", Code: http.StatusGone})
	e.srv.DropWatches()
	require.Eventually(t, func() bool { return inf.Stats().Relists >= 1 && inf.QueueStats().Depth == 0 },
		waitFor, time.Millisecond, "no relist")
	for _, o := range inf.Indexer().List() {
		p := o.(*corev1.Pod)
		assert.Same(t, before[p.Namespace+"/"+p.Name], o, "%s was replaced by a copy", p.Name)
	}
}
