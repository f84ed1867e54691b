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
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	kruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/fakeapi"
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
// of JSON each) and reports the heap the informer retains per cached pod,
// after a collection: the figure docs/benchmarks.md compares with
// client-go's (bench/cmd/compare).
//
//	go test -run '^$' -bench CachedPodHeap -benchtime 1x .
func BenchmarkCachedPodHeap(b *testing.B) {
	const n = 5000
	srv, err := fakeapi.NewServer(fakeapi.Options{})
	require.NoError(b, err)
	defer srv.Close()
	for i := range n {
		_, err := srv.Create(realpod.New(i))
		require.NoError(b, err)
	}
	for _, ct := range []string{rest.ContentTypeJSON, rest.ContentTypeProtobuf} {
		b.Run(ct[len("application/"):], func(b *testing.B) {
			var perPod float64
			for b.Loop() {
				perPod = cachedHeapPerPod(b, srv, ct, n)
			}
			b.ReportMetric(perPod, "B/pod")
		})
	}
}

func cachedHeapPerPod(b *testing.B, srv *fakeapi.Server, ct string, n int) float64 {
	before := heapAfterGC()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := informer.NewFactory(rest.Config{Host: srv.URL(), ContentType: ct}, informer.FactoryOptions{})
	defer f.Shutdown()
	inf, err := informer.For[*corev1.Pod](f)
	require.NoError(b, err)
	f.Start(ctx)
	for name, ok := range f.WaitForCacheSync(ctx) {
		require.True(b, ok, "%s did not sync", name)
	}
	require.Equal(b, n, len(inf.Indexer().List()), fmt.Sprint("cached pods"))
	perPod := float64(heapAfterGC()-before) / float64(n)
	runtime.KeepAlive(inf)
	return perPod
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
