package informer_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/processor"
	"github.com/seed31a95821/informer/reflector"
	"github.com/seed31a95821/informer/reflector/wire"
	"github.com/seed31a95821/informer/rest"
)

const waitFor = 20 * time.Second

// fastRetry keeps fault tests short: the same backoff machinery, smaller
// figures.
var fastRetry = reflector.Backoff{Initial: 10 * time.Millisecond, Max: 50 * time.Millisecond}

// env is one fake API server and a started factory on it.
type env struct {
	srv     *fakeapi.Server
	factory *informer.Factory
	ctx     context.Context
	errs    *errorLog
}

type errorLog struct {
	mu   sync.Mutex // guards list
	list []error
}

func (l *errorLog) add(err error) { l.mu.Lock(); l.list = append(l.list, err); l.mu.Unlock() }
func (l *errorLog) all() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]error(nil), l.list...)
}

// newEnv starts a server with objs and a factory with opts. Everything stops,
// and no goroutine may be left, when the test ends.
func newEnv(t *testing.T, opts informer.FactoryOptions, objs ...runtime.Object) *env {
	t.Helper()
	t.Cleanup(func() { goleak.VerifyNone(t) })
	srv, err := fakeapi.NewServer(fakeapi.Options{BookmarkInterval: 100 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	for _, o := range objs {
		_, err := srv.Create(o)
		require.NoError(t, err)
	}
	e := &env{srv: srv, errs: &errorLog{}}
	opts.Informer.OnError = e.errs.add
	if opts.Informer.Reflector.Backoff == (reflector.Backoff{}) {
		opts.Informer.Reflector.Backoff = fastRetry
	}
	e.factory = informer.NewFactory(rest.Config{Host: srv.URL()}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	t.Cleanup(e.factory.Shutdown)
	e.ctx = ctx
	return e
}

func (e *env) start(t *testing.T) {
	t.Helper()
	e.factory.Start(e.ctx)
	for name, ok := range e.factory.WaitForCacheSync(e.ctx) {
		require.True(t, ok, "%s did not sync", name)
	}
}

// recorder is a handler that writes down what it hears, one line an event.
type recorder struct {
	mu     sync.Mutex // guards events
	events []string
}

func (r *recorder) handler() informer.Handler[*corev1.Pod] {
	return informer.Handler[*corev1.Pod]{
		OnAdd: func(p *corev1.Pod, initial bool) {
			if initial {
				r.log("add(initial) " + p.Name)
			} else {
				r.log("add " + p.Name)
			}
		},
		OnUpdate: func(old, p *corev1.Pod) { r.log("update " + p.Name) },
		OnDelete: func(p *corev1.Pod, unknown bool) {
			if unknown {
				r.log("delete(unknown) " + p.Name)
			} else {
				r.log("delete " + p.Name)
			}
		},
	}
}

func (r *recorder) log(s string) { r.mu.Lock(); r.events = append(r.events, s); r.mu.Unlock() }
func (r *recorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

func (r *recorder) waitFor(t *testing.T, want ...string) {
	t.Helper()
	require.Eventually(t, func() bool { return containsAll(r.seen(), want) }, waitFor, 5*time.Millisecond,
		"want %v", want)
}

func containsAll(have, want []string) bool {
	set := map[string]bool{}
	for _, h := range have {
		set[h] = true
	}
	for _, w := range want {
		if !set[w] {
			return false
		}
	}
	return true
}

func TestRunReturnsOnlyAfterEverythingStopped(t *testing.T) {
	defer goleak.VerifyNone(t)
	srv, err := fakeapi.NewServer(fakeapi.Options{})
	require.NoError(t, err)
	defer srv.Close()
	rc, err := rest.New(rest.Config{Host: srv.URL()})
	require.NoError(t, err)
	lw, err := wire.New(rc, apiresource.Guess(corev1.SchemeGroupVersion.WithKind("Pod")), wire.Options{})
	require.NoError(t, err)
	inf := informer.New[*corev1.Pod](lw, informer.Options{Name: "pods"})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- inf.Run(ctx) }()
	select {
	case <-inf.Synced():
	case <-time.After(waitFor):
		t.Fatal("no sync")
	}
	require.ErrorIs(t, inf.Run(ctx), informer.ErrAlreadyRunning)
	cancel()
	require.NoError(t, <-done)
}

func TestLateHandlerGetsCurrentStateThenLiveEvents(t *testing.T) {
	e := newEnv(t, informer.FactoryOptions{}, pod("shop", "a", nil), pod("shop", "b", nil))
	pods, err := informer.For[*corev1.Pod](e.factory)
	require.NoError(t, err)
	e.start(t)

	var r recorder
	reg, err := pods.AddEventHandler(r.handler(), informer.HandlerOptions{Name: "late"})
	require.NoError(t, err)
	require.True(t, informer.WaitForCacheSync(e.ctx, reg))
	require.ElementsMatch(t, []string{"add(initial) a", "add(initial) b"}, r.seen())

	_, err = e.srv.Create(pod("shop", "c", nil))
	require.NoError(t, err)
	r.waitFor(t, "add c")
}

// A deletion the informer missed, because its watch was down and the history
// was compacted meanwhile, arrives after the relist as a typed object with
// finalStateUnknown set: the classic tombstone, without the type assertion.
func TestMissedDeleteArrivesAsTombstoneAfterRelist(t *testing.T) {
	for _, atomic := range []bool{false, true} {
		t.Run(map[bool]string{false: "per-key", true: "atomic"}[atomic], func(t *testing.T) {
			opts := informer.FactoryOptions{}
			opts.Informer.AtomicRelist = atomic
			e := newEnv(t, opts, pod("shop", "a", nil), pod("shop", "b", nil))
			pods, err := informer.For[*corev1.Pod](e.factory)
			require.NoError(t, err)
			var r recorder
			_, err = pods.AddEventHandler(r.handler(), informer.HandlerOptions{})
			require.NoError(t, err)
			e.start(t)
			relistsBefore := pods.Stats().Relists

			// Take the watch down and keep it down while "a" is deleted and
			// the history that recorded the deletion is compacted away.
			e.srv.Faults().FailNext(fakeapi.Failure{Verb: "watch", Resource: "pods", Count: 1 << 20, Code: 503})
			e.srv.DropWatches()
			require.NoError(t, e.srv.Delete(pod("shop", "a", nil)))
			e.srv.Compact()
			e.srv.Faults().Reset()

			r.waitFor(t, "delete(unknown) a")
			_, stillCached := pods.Indexer().Get("shop/a")
			require.False(t, stillCached)
			// The reflector counts the relist once the store has taken it,
			// which can be just after the handler has heard of the delete.
			require.Eventually(t, func() bool { return pods.Stats().Relists > relistsBefore }, waitFor, 5*time.Millisecond,
				"a 410 must lead to a relist")
		})
	}
}

func TestPanickingHandlerIsReportedAndStillSyncs(t *testing.T) {
	e := newEnv(t, informer.FactoryOptions{}, pod("shop", "a", nil))
	pods, err := informer.For[*corev1.Pod](e.factory)
	require.NoError(t, err)
	var r recorder
	reg, err := pods.AddEventHandler(informer.Handler[*corev1.Pod]{
		OnAdd: func(p *corev1.Pod, _ bool) {
			if p.Name == "a" {
				panic("boom")
			}
			r.log("add " + p.Name)
		},
	}, informer.HandlerOptions{Name: "fragile"})
	require.NoError(t, err)
	e.start(t)
	require.True(t, informer.WaitForCacheSync(e.ctx, reg), "a panic must not keep HasSynced false")

	_, err = e.srv.Create(pod("shop", "b", nil))
	require.NoError(t, err)
	r.waitFor(t, "add b") // the handler kept running

	var panicErr *processor.HandlerPanicError
	require.Eventually(t, func() bool {
		for _, err := range e.errs.all() {
			if errors.As(err, &panicErr) {
				return true
			}
		}
		return false
	}, waitFor, 5*time.Millisecond)
	require.Equal(t, "fragile", panicErr.Handler)
	require.Equal(t, "shop/a", panicErr.Key)
}

func TestInformerRequestedAfterStartIsStarted(t *testing.T) {
	e := newEnv(t, informer.FactoryOptions{}, pod("shop", "a", nil))
	e.factory.Start(e.ctx)
	pods, err := informer.For[*corev1.Pod](e.factory) // after Start: client-go would never start it
	require.NoError(t, err)
	require.True(t, informer.WaitForCacheSync(e.ctx, pods))
	require.Equal(t, []string{"shop/a"}, pods.Indexer().ListKeys())
}

func TestFactoryAfterShutdown(t *testing.T) {
	e := newEnv(t, informer.FactoryOptions{})
	e.start(t)
	e.factory.Shutdown()
	_, err := informer.For[*corev1.Pod](e.factory)
	require.ErrorIs(t, err, informer.ErrFactoryShutDown)
}

func TestWaitForCacheSyncReportsWhatDidNotSync(t *testing.T) {
	e := newEnv(t, informer.FactoryOptions{})
	// Every list and watch of pods fails: that informer can never sync.
	e.srv.Faults().FailNext(fakeapi.Failure{Resource: "pods", Count: 1 << 20, Code: 500})
	_, err := informer.For[*corev1.Pod](e.factory)
	require.NoError(t, err)
	services, err := informer.For[*corev1.Service](e.factory)
	require.NoError(t, err)
	e.factory.Start(e.ctx)
	// Services sync, however slow the machine; only then does the short
	// wait below stand for "pods never will".
	long, cancelLong := context.WithTimeout(e.ctx, waitFor)
	defer cancelLong()
	require.True(t, informer.WaitForCacheSync(long, services))
	ctx, cancel := context.WithTimeout(e.ctx, 500*time.Millisecond)
	defer cancel()
	require.Equal(t, map[string]bool{"pods": false, "services": true}, e.factory.WaitForCacheSync(ctx))
}

type notRegistered struct{ corev1.Pod }

func TestUnknownTypeIsAnError(t *testing.T) {
	e := newEnv(t, informer.FactoryOptions{})
	_, err := informer.For[*notRegistered](e.factory)
	require.ErrorIs(t, err, informer.ErrUnknownType)
}

func TestStripManagedFieldsTransform(t *testing.T) {
	p := pod("shop", "a", nil)
	p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}
	opts := informer.FactoryOptions{}
	opts.Informer.Transform = informer.StripManagedFields()
	e := newEnv(t, opts, p)
	pods, err := informer.For[*corev1.Pod](e.factory)
	require.NoError(t, err)
	e.start(t)
	cached, err := pods.Lister().Namespace("shop").Get("a")
	require.NoError(t, err)
	require.Empty(t, cached.ManagedFields)
}

// A transform that changes the type must not corrupt the cache: the object is
// reported and left out.
func TestWrongTypeFromTransformIsReportedNotCached(t *testing.T) {
	opts := informer.FactoryOptions{}
	opts.Informer.Transform.Func = func(obj runtime.Object) (runtime.Object, error) {
		if p, ok := obj.(*corev1.Pod); ok && p.Name == "bad" {
			return &corev1.Service{ObjectMeta: p.ObjectMeta}, nil
		}
		return obj, nil
	}
	e := newEnv(t, opts, pod("shop", "good", nil), pod("shop", "bad", nil))
	pods, err := informer.For[*corev1.Pod](e.factory)
	require.NoError(t, err)
	e.start(t)
	require.Equal(t, []string{"shop/good"}, pods.Indexer().ListKeys())
	require.Eventually(t, func() bool {
		for _, err := range e.errs.all() {
			if errors.Is(err, informer.ErrWrongType) {
				return true
			}
		}
		return false
	}, waitFor, 5*time.Millisecond)
}

func TestMetadataOnlyInformer(t *testing.T) {
	p := pod("shop", "a", map[string]string{"app": "web"})
	p.Spec.NodeName = "node-1"
	e := newEnv(t, informer.FactoryOptions{}, p)
	meta, err := informer.ForMetadata(e.factory, schema.GroupVersionResource{Version: "v1", Resource: "pods"}, false)
	require.NoError(t, err)
	e.start(t)
	got, err := meta.Lister().Namespace("shop").Get("a")
	require.NoError(t, err)
	require.Equal(t, "web", got.Labels["app"])
	// The server answers with its own kind for the trimmed objects.
	require.Equal(t, "PartialObjectMetadata", got.Kind)
}

func TestResyncRedeliversOnlyToDueHandlers(t *testing.T) {
	e := newEnv(t, informer.FactoryOptions{}, pod("shop", "a", nil))
	pods, err := informer.For[*corev1.Pod](e.factory)
	require.NoError(t, err)
	var resyncing, quiet recorder
	_, err = pods.AddEventHandler(resyncing.handler(), informer.HandlerOptions{Name: "resync", ResyncPeriod: time.Second})
	require.NoError(t, err)
	_, err = pods.AddEventHandler(quiet.handler(), informer.HandlerOptions{Name: "quiet"})
	require.NoError(t, err)
	e.start(t)

	resyncing.waitFor(t, "update a") // nothing changed on the server: this is a resync
	// The marker proves the quiet handler has drained everything sent before it.
	_, err = e.srv.Create(pod("shop", "marker", nil))
	require.NoError(t, err)
	quiet.waitFor(t, "add marker")
	require.NotContains(t, quiet.seen(), "update a")
}

// TestWaitForCacheSyncReturnsWhenInformersStop waits, with a context that
// never ends, for an informer that cannot sync, and stops the factory's
// informers: none of them can sync after that, so the wait must end, and
// report it.
func TestWaitForCacheSyncReturnsWhenInformersStop(t *testing.T) {
	for _, stop := range []string{"shutdown", "shutdown-before-start", "start-context-ends"} {
		t.Run(stop, func(t *testing.T) {
			e := newEnv(t, informer.FactoryOptions{})
			e.srv.Faults().FailNext(fakeapi.Failure{Resource: "pods", Count: 1 << 20, Code: 500})
			_, err := informer.For[*corev1.Pod](e.factory)
			require.NoError(t, err)
			startCtx, endStart := context.WithCancel(e.ctx)
			defer endStart()
			if stop != "shutdown-before-start" {
				e.factory.Start(startCtx)
			}
			got := make(chan map[string]bool, 1)
			go func() { got <- e.factory.WaitForCacheSync(context.Background()) }()
			if stop == "start-context-ends" {
				endStart()
			} else {
				e.factory.Shutdown()
			}
			select {
			case synced := <-got:
				require.Equal(t, map[string]bool{"pods": false}, synced)
			case <-time.After(waitFor):
				t.Fatal("WaitForCacheSync still waits for informers that stopped")
			}
		})
	}
}

// The reflector's resync timer is set when the informer is built, but a
// handler may ask for resyncs later: the informer's fixed one-second tick
// serves it.
func TestResyncServesAHandlerAddedAfterStart(t *testing.T) {
	e := newEnv(t, informer.FactoryOptions{}, pod("shop", "a", nil))
	pods, err := informer.For[*corev1.Pod](e.factory)
	require.NoError(t, err)
	var plain recorder
	_, err = pods.AddEventHandler(plain.handler(), informer.HandlerOptions{Name: "plain"})
	require.NoError(t, err)
	e.start(t)
	plain.waitFor(t, "add(initial) a")

	var late recorder
	_, err = pods.AddEventHandler(late.handler(), informer.HandlerOptions{Name: "late", ResyncPeriod: time.Second})
	require.NoError(t, err)
	late.waitFor(t, "update a") // nothing changed on the server: a resync
	require.Positive(t, pods.Stats().Resyncs)
}
