package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// The in-memory API server of the pipeline benchmarks: a ListerWatcher that
// replays the same pre-built watch events to whichever informer asks, ours
// or client-go's. Nothing is encoded or decoded and nothing is allocated per
// event on this side, so what a benchmark measures is the informer alone:
// reflector, queue, indexer, processor and handlers.

// replayPoolSlots is how many pods the replayed history cycles through. It
// is also the largest the cache ever gets, a realistic size for one
// namespace-heavy cluster's worth of churn without making the pool itself
// (built once, kept for the whole run) weigh on the garbage collector.
const replayPoolSlots = 1000

// replayPool is a cyclic history of watch events: a full cycle creates,
// modifies and deletes every one of replayPoolSlots pods, so the cache is
// empty again where the cycle wraps and event i+len(events) can follow
// event i+len(events)-1 as consistently as event i followed its
// predecessor. Building it once and cycling through it keeps the memory of a
// benchmark independent of b.N.
//
// The history is laid out in three rounds of replayPoolSlots events:
// every pod is ADDED, then every pod MODIFIED, then every pod DELETED. Each
// event of a pod carries its own *corev1.Pod (never mutated after
// construction), so an update hands a handler two distinct objects, as a
// real watch would.
//
// Why exactly one MODIFIED per pod: our queue compacts two queued updates
// of one key into one (client-go's RealFIFO does not), and whether two
// updates are ever queued together depends on goroutine scheduling. With
// one update between an add and a delete, which no queue may merge, every
// event reaches every handler exactly once in both implementations, so "all
// handlers have seen b.N events" is a deterministic end.
//
// The resourceVersions are the events' positions in the pool, written as
// opaque strings ("r2", "r3", ...) because they repeat when the pool wraps:
// our reflector refuses a watch event whose numeric resourceVersion is
// older than the watch had reached (reflector.KindRVBackwards), and only
// numbers are compared, so an opaque RV keeps the wrap from looking like a
// server going back in time. client-go records the value without checking.
//
// A replayPool is read-only once built and safe for concurrent use.
type replayPool struct {
	events []watch.Event
}

// newReplayPool builds the history described on replayPool.
func newReplayPool() *replayPool {
	p := &replayPool{events: make([]watch.Event, 0, 3*replayPoolSlots)}
	phases := []watch.EventType{watch.Added, watch.Modified, watch.Deleted}
	for round, typ := range phases {
		for slot := range replayPoolSlots {
			rv := 2 + round*replayPoolSlots + slot // "1" is the list's
			p.events = append(p.events, watch.Event{Type: typ, Object: replayPod(slot, rv, typ)})
		}
	}
	return p
}

// event returns the i-th event of the endless cyclic history.
func (p *replayPool) event(i int) watch.Event { return p.events[i%len(p.events)] }

// expectedKinds counts how many of the first n events are adds, updates
// and deletes: what each handler must be told.
func (p *replayPool) expectedKinds(n int) (adds, updates, deletes int64) {
	for i := range n {
		switch p.event(i).Type {
		case watch.Added:
			adds++
		case watch.Modified:
			updates++
		case watch.Deleted:
			deletes++
		}
	}
	return adds, updates, deletes
}

// expectedKeys returns the namespace/name keys of the pods alive after the
// first n events: what the cache must hold at the end.
func (p *replayPool) expectedKeys(n int) map[string]bool {
	live := make(map[string]bool)
	for i := range n {
		ev := p.event(i)
		pod := ev.Object.(*corev1.Pod)
		key := pod.Namespace + "/" + pod.Name
		if ev.Type == watch.Deleted {
			delete(live, key)
		} else {
			live[key] = true
		}
	}
	return live
}

// replayPod builds the state of the pod in slot after an event of type typ
// at resourceVersion rv. It looks like what a ReplicaSet creates (labels,
// an owner, one container with requests, a node, a pod IP) so that the
// objects the caches hold have a realistic shape, although nothing in
// either pipeline looks further than metadata and labels.
func replayPod(slot, rv int, typ watch.EventType) *corev1.Pod {
	app := fmt.Sprintf("app-%d", slot%20)
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       fmt.Sprintf("ns-%d", slot%10),
			Name:            fmt.Sprintf("%s-7d9f8b6c5-%05d", app, slot),
			UID:             types.UID("uid-" + strconv.Itoa(slot)),
			ResourceVersion: "r" + strconv.Itoa(rv),
			Labels:          map[string]string{"app": app, "pod-template-hash": "7d9f8b6c5"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: app + "-7d9f8b6c5", UID: "rs-uid",
			}},
		},
		Spec: corev1.PodSpec{
			NodeName: fmt.Sprintf("node-%d", slot%50),
			Containers: []corev1.Container{{
				Name:  "main",
				Image: "registry.example/" + app + ":1.0",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU:    resource.MustParse("100m"),
					corev1.ResourceMemory: resource.MustParse("128Mi"),
				}},
			}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
	if typ != watch.Added {
		pod.Status.Phase = corev1.PodRunning
		pod.Status.PodIP = fmt.Sprintf("10.0.%d.%d", slot/250, slot%250)
	}
	return pod
}

// errReplayWatchList is what the replayer answers a WatchList request
// (sendInitialEvents): both informers are told not to use WatchList, so
// such a request means the benchmark is misconfigured. Failing loudly beats
// the alternative, a reflector waiting for a bookmark that never comes.
var errReplayWatchList = errors.New("replay: WatchList (sendInitialEvents) requested, but both informers were configured not to use it")

// replayLW is the in-memory server. It satisfies our reflector.ListerWatcher
// directly; clientGoReplayLW adapts it to client-go's interfaces.
//
// List answers a PodList at resourceVersion "1", empty unless listed is set. The first Watch
// streams the first n events of the pool, one at a time through an
// unbuffered channel as a decoding watch would, then stays open, silent,
// until stopped. Any later Watch (a reflector that restarted its watch)
// streams nothing, so that no event is ever delivered twice; the
// benchmark's end condition would then never be met, and the test checks
// that exactly one watch was opened.
//
// WatchList is turned off for both informers, the same way: our reflector
// asks SupportsWatchList, client-go's asks IsWatchListSemanticsUnSupported
// (its escape hatch for fakes, checked even though its WatchListClient
// feature gate is on by default). Both then do what they did before
// WatchList existed: List, then Watch from the list's resourceVersion.
//
// A replayLW is single-use (one informer) and safe for concurrent use.
type replayLW struct {
	pool *replayPool
	n    int
	// listed is what List answers, copied each time; nil is the empty list.
	// The initial-list benchmark sets it.
	listed []corev1.Pod

	lists, watches, watchLists atomic.Int64

	// streams counts the watch goroutines still running, so that a test
	// or benchmark can wait until none outlives the informer.
	streams sync.WaitGroup
}

func newReplayLW(pool *replayPool, n int) *replayLW {
	return &replayLW{pool: pool, n: n}
}

// List implements reflector.ListerWatcher. The empty list is built on each
// call (it is a handful of allocations, once per run) because a reflector
// may keep what it is given.
func (lw *replayLW) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	lw.lists.Add(1)
	return &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: slices.Clone(lw.listed)}, nil
}

// Watch implements reflector.ListerWatcher.
func (lw *replayLW) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		lw.watchLists.Add(1)
		return nil, errReplayWatchList
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n := 0
	if lw.watches.Add(1) == 1 {
		n = lw.n
	}
	w := &replayWatch{result: make(chan watch.Event), stop: make(chan struct{})}
	lw.streams.Go(func() { w.stream(ctx, lw.pool, n) })
	return w, nil
}

// SupportsWatchList is the reflector's optional method: this server
// ignores sendInitialEvents, so our reflector must not wait for its bookmark.
func (lw *replayLW) SupportsWatchList() bool { return false }

// wait blocks until every watch goroutine has ended, which happens once each
// watch is stopped or its context is done.
func (lw *replayLW) wait() { lw.streams.Wait() }

// replayWatch is one watch: a goroutine feeding result. It is safe for
// concurrent use.
type replayWatch struct {
	result   chan watch.Event
	stop     chan struct{}
	stopOnce sync.Once
}

// stream sends the first n events of pool, then waits to be stopped. It
// closes result when it returns, as watch.Interface requires.
func (w *replayWatch) stream(ctx context.Context, pool *replayPool, n int) {
	defer close(w.result)
	for i := range n {
		select {
		case w.result <- pool.event(i):
		case <-w.stop:
			return
		case <-ctx.Done():
			return
		}
	}
	select {
	case <-w.stop:
	case <-ctx.Done():
	}
}

// Stop implements watch.Interface. It may be called any number of times.
func (w *replayWatch) Stop() { w.stopOnce.Do(func() { close(w.stop) }) }

// ResultChan implements watch.Interface.
func (w *replayWatch) ResultChan() <-chan watch.Event { return w.result }

// clientGoReplayLW adapts replayLW to client-go: cache.ListerWatcher (the
// context-free methods NewSharedIndexInformer's signature requires) and
// cache.ListerWatcherWithContext (what its reflector actually calls when
// present). The method names clash with ours, hence a separate type.
type clientGoReplayLW struct{ lw *replayLW }

// List implements cache.Lister.
func (a clientGoReplayLW) List(opts metav1.ListOptions) (runtime.Object, error) {
	return a.lw.List(context.Background(), opts)
}

// Watch implements cache.Watcher.
func (a clientGoReplayLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return a.lw.Watch(context.Background(), opts)
}

// ListWithContext implements cache.ListerWithContext.
func (a clientGoReplayLW) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	return a.lw.List(ctx, opts)
}

// WatchWithContext implements cache.WatcherWithContext.
func (a clientGoReplayLW) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return a.lw.Watch(ctx, opts)
}

// IsWatchListSemanticsUnSupported tells client-go's reflector (through
// watchlist.DoesClientNotSupportWatchListSemantics) not to use WatchList.
func (a clientGoReplayLW) IsWatchListSemanticsUnSupported() bool { return true }
