package bench

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/internal/realobj"
	"github.com/seed31a95821/informer/internal/realpod"
	ourrest "github.com/seed31a95821/informer/rest"
)

// The heap per cached object for the kinds a cluster holds many of
// besides Pods: ConfigMaps, Secrets, Deployments, ReplicaSets and Nodes
// shaped as internal/realobj makes them, and Pods (internal/realpod) for
// reference. Each side, ours (impl=informer: informer.For through the
// factory, default options) and client-go's (impl=client-go: the typed
// informer of a SharedInformerFactory, default options), syncs the same
// kindHeapObjects objects from a fakeapi server of its own, seeded alike;
// then every object is written once with realobj.Touch, in a random order
// fixed by -kindheap.seed, and the side waits until its cache holds every
// write. Both sides get the same bytes: the same objects, the same
// resourceVersions, the same order.
//
// B/obj is the heap the informer retains per cached object once synced:
// HeapAlloc after a collection, less the same before the informer was made
// (the server is in both). B/obj-churned is the heap after the churn, less
// the heap once the informer has been shut down and collected: the server,
// in this process too, grew with the writes. The same method as the root
// package's BenchmarkCachedObjectHeap, which measures ours alone.
//
//	go test -run '^$' -bench CachedKindHeap -benchtime 1x -count 3 . | tee kindheap.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /impl kindheap.txt
//
// Each sub-benchmark logs the churn's seed; the second of a pair logs both
// sides' figures and their ratios.
func BenchmarkCachedKindHeap(b *testing.B) {
	for _, k := range heapKinds {
		for _, e := range []struct{ enc, ct string }{{"protobuf", ourrest.ContentTypeProtobuf}, {"json", ourrest.ContentTypeJSON}} {
			enc, ct := e.enc, e.ct
			got := map[string][2]float64{}
			for _, side := range []struct {
				impl string
				sync kindSync
			}{{"informer", k.ours}, {"client-go", k.clientGo}} {
				b.Run(fmt.Sprintf("kind=%s/enc=%s/impl=%s", k.name, enc, side.impl), func(b *testing.B) {
					var synced, churned float64
					for b.Loop() {
						synced, churned = kindHeap(b, k, side.sync, ct, kindHeapObjects)
					}
					b.ReportMetric(synced, "B/obj")
					b.ReportMetric(churned, "B/obj-churned")
					got[side.impl] = [2]float64{synced, churned}
					b.Logf("%d objects, churn order seed %d (-kindheap.seed)", kindHeapObjects, *kindHeapSeed)
					if ours, theirs := got["informer"], got["client-go"]; ours[0] > 0 && theirs[0] > 0 {
						b.Logf("ours / client-go: synced %.0f / %.0f B/obj = %.2f; after churn %.0f / %.0f B/obj = %.2f",
							ours[0], theirs[0], ours[0]/theirs[0], ours[1], theirs[1], ours[1]/theirs[1])
					}
				})
			}
		}
	}
}

// kindHeapObjects is how many objects of each kind the server holds: a
// large cluster's worth of Nodes, a middling one's of the others.
const kindHeapObjects = 2000

// kindHeapSeed fixes the churn's order. A fixed default gives both sides
// the same order when they run in processes of their own
// (bench/cmd/compare runs one side at a time).
var kindHeapSeed = flag.Uint64("kindheap.seed", 33, "seed of BenchmarkCachedKindHeap's random churn order")

// kindHeapRound is the round every churn writes (realobj.Touch): each
// side has a fresh server, so every run writes the same objects.
const kindHeapRound = 1

// kindHeapClock is the time on every server: creationTimestamps and
// managedFields' times.
var kindHeapClock = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// heapKind is one kind under test and how each side makes its informer.
type heapKind struct {
	name     string
	gvr      schema.GroupVersionResource
	obj      func(i int) kruntime.Object // object i on the server
	ours     kindSync
	clientGo kindSync
	// weakly returns a function that reports whether every one of objs
	// has been collected: a cached object is collected once the cache
	// that held it is.
	weakly func(objs []kruntime.Object) (gone func() bool)
}

// kindSync starts an informer of one kind on host, speaking ct, that runs
// until ctx ends or its stop is called, and returns once it has synced, or
// fails after kindHeapTimeout.
type kindSync func(ctx context.Context, host, ct string) (*kindCache, error)

// kindHeapTimeout bounds each wait: a sync, a churn's arrival, a release.
const kindHeapTimeout = 2 * time.Minute

// kindCache is a synced informer as the benchmark sees it.
type kindCache struct {
	objects func() []kruntime.Object // what the cache holds now
	stop    func()                   // shuts the informer down; it is reachable until then
}

var heapKinds = []heapKind{
	newHeapKind("configmaps", corev1.SchemeGroupVersion.WithResource("configmaps"), realobj.ConfigMap,
		func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().ConfigMaps().Informer()
		}),
	newHeapKind("secrets", corev1.SchemeGroupVersion.WithResource("secrets"), realobj.Secret,
		func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().Secrets().Informer()
		}),
	newHeapKind("deployments", appsv1.SchemeGroupVersion.WithResource("deployments"), realobj.Deployment,
		func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Apps().V1().Deployments().Informer()
		}),
	newHeapKind("replicasets", appsv1.SchemeGroupVersion.WithResource("replicasets"), realobj.ReplicaSet,
		func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Apps().V1().ReplicaSets().Informer()
		}),
	newHeapKind("nodes", corev1.SchemeGroupVersion.WithResource("nodes"), realobj.Node,
		func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().Nodes().Informer()
		}),
	newHeapKind("pods", corev1.SchemeGroupVersion.WithResource("pods"), realpod.New,
		func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Core().V1().Pods().Informer()
		}),
}

// newHeapKind is the kind whose objects are *E, built by obj; clientGo
// picks its informer from client-go's factory.
func newHeapKind[E any, P interface {
	*E
	kruntime.Object
}](name string, gvr schema.GroupVersionResource, obj func(int) P, clientGo func(informers.SharedInformerFactory) cache.SharedIndexInformer) heapKind {
	return heapKind{
		name: name, gvr: gvr,
		obj:  func(i int) kruntime.Object { return obj(i) },
		ours: syncOursKind[P],
		clientGo: func(ctx context.Context, host, ct string) (*kindCache, error) {
			return syncClientGoKind(ctx, host, ct, clientGo)
		},
		weakly: func(objs []kruntime.Object) func() bool {
			refs := make([]weak.Pointer[E], len(objs))
			for i, o := range objs {
				refs[i] = weak.Make((*E)(o.(P)))
			}
			return func() bool {
				for _, r := range refs {
					if r.Value() != nil {
						return false
					}
				}
				return true
			}
		},
	}
}

func syncOursKind[P kruntime.Object](ctx context.Context, host, ct string) (*kindCache, error) {
	f := informer.NewFactory(ourrest.Config{Host: host, ContentType: ct}, informer.FactoryOptions{})
	inf, err := informer.For[P](f)
	if err != nil {
		f.Shutdown()
		return nil, err
	}
	f.Start(ctx)
	wait, cancel := context.WithTimeout(ctx, kindHeapTimeout)
	defer cancel()
	for name, ok := range f.WaitForCacheSync(wait) {
		if !ok {
			f.Shutdown()
			return nil, fmt.Errorf("ours: %s did not sync", name)
		}
	}
	return &kindCache{objects: inf.Indexer().List, stop: func() { f.Shutdown(); runtime.KeepAlive(inf) }}, nil
}

func syncClientGoKind(ctx context.Context, host, ct string, pick func(informers.SharedInformerFactory) cache.SharedIndexInformer) (*kindCache, error) {
	// client-go's default rate limit (5 QPS) is the compare harness's
	// 1000 here too; a sync makes two requests either way.
	rc := &rest.Config{Host: host, QPS: 1000, Burst: 1000}
	rc.ContentType, rc.AcceptContentTypes = ct, ct
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	fac := informers.NewSharedInformerFactory(cs, 0)
	inf := pick(fac)
	run, cancel := context.WithCancel(ctx)
	stop := func() { cancel(); fac.Shutdown() }
	fac.Start(run.Done())
	wait, cancelWait := context.WithTimeout(ctx, kindHeapTimeout)
	defer cancelWait()
	if !cache.WaitForCacheSync(wait.Done(), inf.HasSynced) {
		stop()
		return nil, fmt.Errorf("client-go's informer did not sync")
	}
	objects := func() []kruntime.Object {
		l := inf.GetStore().List()
		out := make([]kruntime.Object, len(l))
		for i, o := range l {
			out[i] = o.(kruntime.Object)
		}
		return out
	}
	return &kindCache{objects: objects, stop: func() { stop(); runtime.KeepAlive(inf) }}, nil
}

// newKindServer is a fresh server holding objects 0 to n-1 of k.
func newKindServer(tb testing.TB, k heapKind, n int) *fakeapi.Server {
	tb.Helper()
	// No record of writes and sent events: it would grow with the sync
	// and be counted as the informer's. A fixed clock, at whole seconds as
	// the wire carries them: two servers then hold equal objects.
	srv, err := fakeapi.NewServer(fakeapi.Options{HistoryLimit: -1, Now: func() time.Time { return kindHeapClock }})
	if err != nil {
		tb.Fatal(err)
	}
	for i := range n {
		if _, err := srv.Create(k.obj(i)); err != nil {
			srv.Close()
			tb.Fatal(err)
		}
	}
	return srv
}

// kindChurn writes every object of k once, with realobj.Touch, in the
// order kindHeapSeed fixes.
func kindChurn(srv *fakeapi.Server, k heapKind, n int) error {
	for _, i := range rand.New(rand.NewPCG(*kindHeapSeed, uint64(n))).Perm(n) {
		if _, err := srv.Update(realobj.Touch(k.obj(i), kindHeapRound)); err != nil {
			return err
		}
	}
	return nil
}

// kindHeap runs one side on a fresh server of n objects of k and returns
// its heap per cached object synced and after the churn. It fails b if the
// cache does not hold exactly n objects, or does not see every write or
// let go of them after its shutdown, within kindHeapTimeout.
func kindHeap(b *testing.B, k heapKind, sync kindSync, ct string, n int) (synced, churned float64) {
	srv := newKindServer(b, k, n)
	defer srv.Close()
	before := heapAfterGC()
	c, err := sync(context.Background(), srv.URL(), ct)
	if err != nil {
		b.Fatal(err)
	}
	if got := len(c.objects()); got != n {
		c.stop()
		b.Fatalf("%s: the synced cache holds %d objects, want %d", k.name, got, n)
	}
	synced = (float64(heapAfterGC()) - float64(before)) / float64(n)

	if err := kindChurn(srv, k, n); err != nil {
		c.stop()
		b.Fatal(err)
	}
	if err := awaitRound(c.objects, n); err != nil {
		c.stop()
		b.Fatalf("%s: %v", k.name, err)
	}
	gone := k.weakly(sample(c.objects(), 16))
	with := heapAfterGC()
	c.stop()
	// The informer's goroutines and its connection's may hold it a moment
	// after the shutdown returned: wait until its objects are collected.
	if err := awaitCollected(gone); err != nil {
		b.Fatalf("%s: %v", k.name, err)
	}
	without := heapAfterGC()
	return synced, (float64(with) - float64(without)) / float64(n)
}

// sample is up to m of objs, spread over them.
func sample(objs []kruntime.Object, m int) []kruntime.Object {
	var out []kruntime.Object
	for i := 0; i < len(objs); i += max(len(objs)/m, 1) {
		out = append(out, objs[i])
	}
	return out
}

// awaitRound waits until the cache holds exactly n objects, every one with
// the churn's round, or kindHeapTimeout has passed.
func awaitRound(objects func() []kruntime.Object, n int) error {
	want := fmt.Sprint(kindHeapRound)
	deadline := time.NewTimer(kindHeapTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		objs := objects()
		seen := 0
		for _, o := range objs {
			if m, err := meta.Accessor(o); err == nil && m.GetAnnotations()[realobj.RoundAnnotation] == want {
				seen++
			}
		}
		if len(objs) == n && seen == n {
			return nil
		}
		select {
		case <-deadline.C:
			return fmt.Errorf("the cache holds %d objects, %d of them written by the churn; want %d", len(objs), seen, n)
		case <-tick.C:
		}
	}
}

// awaitCollected collects until gone reports true, or kindHeapTimeout has
// passed.
func awaitCollected(gone func() bool) error {
	deadline := time.NewTimer(kindHeapTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		runtime.GC()
		if gone() {
			return nil
		}
		select {
		case <-deadline.C:
			return fmt.Errorf("the informer's objects were not collected after its shutdown")
		case <-tick.C:
		}
	}
}

// TestCachedKindHeapSidesAgree is the benchmark's check on a few objects
// of every kind, in both encodings: the two sides' servers hold the same
// objects, and each side's cache, after the churn, holds exactly what its
// server holds.
func TestCachedKindHeapSidesAgree(t *testing.T) {
	const n = 40
	for _, k := range heapKinds {
		for _, ct := range []string{ourrest.ContentTypeProtobuf, ourrest.ContentTypeJSON} {
			t.Run(k.name+"/"+ct, func(t *testing.T) {
				var served [][]kruntime.Object
				for _, sync := range []kindSync{k.ours, k.clientGo} {
					srv := newKindServer(t, k, n)
					defer srv.Close()
					c, err := sync(context.Background(), srv.URL(), ct)
					require.NoError(t, err)
					defer c.stop()
					require.NoError(t, kindChurn(srv, k, n))
					require.NoError(t, awaitRound(c.objects, n))
					want, err := srv.Objects(k.gvr)
					require.NoError(t, err)
					require.Len(t, want, n)
					served = append(served, want)
					assert.Empty(t, cacheDiff(want, c.objects()))
				}
				assert.Empty(t, cacheDiff(served[0], served[1]), "the two servers differ")
			})
		}
	}
}

// cacheDiff names the objects of got that differ from want's of the same
// namespace and name, or are missing from either, TypeMeta aside (a typed
// decode may leave it empty).
func cacheDiff(want, got []kruntime.Object) []string {
	byKey := func(objs []kruntime.Object) map[string]kruntime.Object {
		m := map[string]kruntime.Object{}
		for _, o := range objs {
			o = o.DeepCopyObject()
			o.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
			a, _ := meta.Accessor(o)
			m[a.GetNamespace()+"/"+a.GetName()] = o
		}
		return m
	}
	w, g := byKey(want), byKey(got)
	var diff []string
	for key, o := range w {
		if !equality.Semantic.DeepEqual(o, g[key]) {
			diff = append(diff, key)
		}
	}
	for key := range g {
		if w[key] == nil {
			diff = append(diff, key+" (not wanted)")
		}
	}
	return diff
}
