package integration

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/reflector/wire"
)

var propertySeed = flag.Uint64("seed", 0, "seed for TestInformerConvergesUnderRandomFaults (0: random)")

// handlerView is the state a handler builds from the notifications alone:
// if the informer's events are right, it equals the cache.
type handlerView struct {
	mu    sync.Mutex        // guards state
	state map[string]string // key -> resourceVersion
}

func (v *handlerView) handler() informer.Handler[*corev1.Pod] {
	set := func(p *corev1.Pod) {
		v.mu.Lock()
		v.state[p.Namespace+"/"+p.Name] = p.ResourceVersion
		v.mu.Unlock()
	}
	return informer.Handler[*corev1.Pod]{
		OnAdd:    func(p *corev1.Pod, _ bool) { set(p) },
		OnUpdate: func(_, p *corev1.Pod) { set(p) },
		OnDelete: func(p *corev1.Pod, _ bool) {
			v.mu.Lock()
			delete(v.state, p.Namespace+"/"+p.Name)
			v.mu.Unlock()
		},
	}
}

func (v *handlerView) snapshot() map[string]string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return maps.Clone(v.state)
}

// The model-based check of the whole pipeline: random writes (creates,
// updates that move pods in and out of the informer's label selector,
// deletes) interleaved with random faults (dropped watches, compaction while
// the watch is down, throttling, cut frames). After every round the system
// is left to quiesce, and then three views must agree: the server's objects
// that match the scope, the informer's cache, and the state a handler built
// from its notifications.
func TestInformerConvergesUnderRandomFaults(t *testing.T) {
	defer goleak.VerifyNone(t)
	seed := *propertySeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("seed=%d (rerun with: go test ./integration -run %s -seed %d)", seed, t.Name(), seed)
	rng := rand.New(rand.NewPCG(seed, 2))

	srv, err := fakeapi.NewServer(fakeapi.Options{BookmarkInterval: 100 * time.Millisecond})
	require.NoError(t, err)
	defer srv.Close()

	opts := informer.FactoryOptions{Namespace: "shop", LabelSelector: "app=web"}
	opts.Informer.Reflector = quick()
	opts.Informer.OnError = func(err error) { t.Logf("informer error: %v", err) } // faults produce errors by design
	factory := informer.NewFactory(wire.Config{Host: srv.URL(), ContentType: []string{wire.ContentTypeJSON, wire.ContentTypeProtobuf}[rng.IntN(2)]}, opts)
	defer factory.Shutdown()
	pods, err := informer.For[*corev1.Pod](factory)
	require.NoError(t, err)
	view := &handlerView{state: map[string]string{}}
	_, err = pods.AddEventHandler(view.handler(), informer.HandlerOptions{Name: "view"})
	require.NoError(t, err)
	// With many handlers the informer applies events on its consumer
	// goroutine; with few, the reflector applies them itself when the
	// consumer is idle. Half the seeds run each way; the last extra view is
	// checked too.
	last, handlers := view, 1
	if rng.IntN(2) == 0 {
		handlers += 20
		for i := range 20 {
			last = &handlerView{state: map[string]string{}}
			_, err = pods.AddEventHandler(last.handler(), informer.HandlerOptions{Name: fmt.Sprintf("extra-%d", i)})
			require.NoError(t, err)
		}
	}
	t.Logf("%d handlers", handlers)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	factory.Start(ctx)
	require.True(t, informer.WaitForCacheSync(ctx, pods))

	w := &scopedWriter{srv: srv, rng: rng}
	for round := range 8 {
		fault := w.randomFault()
		t.Logf("round %d: %s", round, fault.name)
		w.writes(t, 10+rng.IntN(30))
		fault.heal()
		requireAgreement(t, srv, pods, view, fmt.Sprintf("round %d after %s", round, fault.name))
		requireAgreement(t, srv, pods, last, fmt.Sprintf("round %d after %s (last handler)", round, fault.name))
	}
}

func requireAgreement(t *testing.T, srv *fakeapi.Server, pods *informer.SharedInformer[*corev1.Pod], view *handlerView, when string) {
	t.Helper()
	selector := labels.SelectorFromSet(labels.Set{"app": "web"})
	want := func() map[string]string {
		objs, err := srv.Objects(podsGVR)
		require.NoError(t, err)
		out := map[string]string{}
		for _, o := range objs {
			p := o.(*corev1.Pod)
			if p.Namespace == "shop" && selector.Matches(labels.Set(p.Labels)) {
				out["shop/"+p.Name] = p.ResourceVersion
			}
		}
		return out
	}
	cache := func() map[string]string {
		out := map[string]string{}
		list, err := pods.Lister().List(labels.Everything())
		require.NoError(t, err)
		for _, p := range list {
			out[p.Namespace+"/"+p.Name] = p.ResourceVersion
		}
		return out
	}
	var server, cached, handled map[string]string
	ok := waitUntil(converged, func() bool {
		server, cached, handled = want(), cache(), view.snapshot()
		return maps.Equal(server, cached) && maps.Equal(cached, handled)
	})
	if !ok {
		for _, w := range srv.Writes() {
			t.Logf("write rv=%d %s %s/%s", w.ResourceVersion, w.Type, w.Namespace, w.Name)
		}
		for _, e := range srv.SentEvents() {
			if e.Type != "BOOKMARK" || e.InitialEvent {
				t.Logf("sent watch=%d %s rv=%s %s/%s initial=%v", e.WatchID, e.Type, e.ResourceVersion, e.Namespace, e.Name, e.InitialEvent)
			}
		}
	}
	require.True(t, ok, "%s: server %d, cache %d, handler %d objects\nserver %v\ncache %v\nhandler %v\nreflector %+v",
		when, len(server), len(cached), len(handled), server, cached, handled, pods.Stats())
}

// scopedWriter writes pods in two namespaces, with labels that put them in
// and out of the informer's scope.
type scopedWriter struct {
	srv  *fakeapi.Server
	rng  *rand.Rand
	live []*corev1.Pod
	next int
}

func (w *scopedWriter) randomLabels() map[string]string {
	return map[string]string{"app": []string{"web", "db"}[w.rng.IntN(2)], "rev": fmt.Sprint(w.rng.IntN(100))}
}

func (w *scopedWriter) writes(t *testing.T, n int) {
	t.Helper()
	for range n {
		switch r := w.rng.IntN(10); {
		case r < 4 || len(w.live) == 0:
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
				Namespace: []string{"shop", "shop", "blog"}[w.rng.IntN(3)],
				Name:      fmt.Sprintf("p-%04d", w.next), Labels: w.randomLabels()}}
			w.next++
			_, err := w.srv.Create(p)
			require.NoError(t, err)
			w.live = append(w.live, p)
		case r < 6:
			i := w.rng.IntN(len(w.live))
			require.NoError(t, w.srv.Delete(w.live[i]))
			w.live = append(w.live[:i], w.live[i+1:]...)
		default: // a label move: in or out of app=web
			p := w.live[w.rng.IntN(len(w.live))]
			p.Labels = w.randomLabels()
			_, err := w.srv.Update(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name, Labels: p.Labels}})
			require.NoError(t, err)
		}
	}
}

// fault is a failure injected before a round of writes and healed after it.
type fault struct {
	name string
	heal func()
}

func (w *scopedWriter) randomFault() fault {
	f := w.srv.Faults()
	switch w.rng.IntN(6) {
	case 0:
		return fault{"no fault", func() {}}
	case 1:
		w.srv.DropWatches()
		return fault{"dropped watches", func() {}}
	case 2:
		f.FailNext(fakeapi.Failure{Verb: "watch", Resource: "pods", Count: 1 << 20, Code: 503})
		w.srv.DropWatches()
		return fault{"watch down, then compaction", func() { w.srv.Compact(); f.Reset() }}
	case 3:
		f.FailNext(fakeapi.Failure{Verb: "watch", Resource: "pods", Count: 2, Code: 429, RetryAfterSeconds: 1})
		w.srv.DropWatches()
		return fault{"throttled", func() {}}
	case 4:
		f.CutNextWatchFrame("pods")
		return fault{"cut frame", func() {}}
	default:
		f.MalformNextWatchFrame("pods")
		return fault{"malformed frame", func() {}}
	}
}
