package informer_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/reflector"
	"github.com/seed31a95821/informer/reflector/wire"
	"github.com/seed31a95821/informer/rest"
)

// watchCounter counts, by resource, the watches that reached the server
// (Watch calls it accepted) and those still open (not yet stopped).
type watchCounter struct {
	mu     sync.Mutex // guards opened and open
	opened map[string]int
	open   map[string]int
}

func (c *watchCounter) counts(resource string) (opened, open int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.opened[resource], c.open[resource]
}

// countingLW is the real wire client, with its Watch counted. Embedding
// the concrete type keeps its other methods (CloseIdleConnections, Scope).
type countingLW struct {
	*wire.ListerWatcher
	resource string
	c        *watchCounter
}

func (l countingLW) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := l.ListerWatcher.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	l.c.mu.Lock()
	l.c.opened[l.resource]++
	l.c.open[l.resource]++
	l.c.mu.Unlock()
	return &countedWatch{Interface: w, done: func() {
		l.c.mu.Lock()
		l.c.open[l.resource]--
		l.c.mu.Unlock()
	}}, nil
}

type countedWatch struct {
	watch.Interface
	once sync.Once
	done func()
}

func (w *countedWatch) Stop() { w.Interface.Stop(); w.once.Do(w.done) }

// TestRemoveStopsOneInformerAndLeavesTheOthers: removing the configmaps
// informer closes its watch, ends its handlers and its goroutines
// (goleak, in newEnv), and changes nothing for pods and services, whose
// watches stay the ones they had. A later For starts a fresh informer.
func TestRemoveStopsOneInformerAndLeavesTheOthers(t *testing.T) {
	counter := &watchCounter{opened: map[string]int{}, open: map[string]int{}}
	var e *env
	e = newEnv(t, informer.FactoryOptions{
		ListerWatcher: func(r informer.Resource, metadataOnly bool) (reflector.ListerWatcher, error) {
			rc, err := rest.New(rest.Config{Host: e.srv.URL()})
			if err != nil {
				return nil, err
			}
			lw, err := wire.New(rc, r, wire.Options{})
			if err != nil {
				return nil, err
			}
			return countingLW{ListerWatcher: lw, resource: r.Plural, c: counter}, nil
		},
	})
	pods, err := informer.For[*corev1.Pod](e.factory)
	require.NoError(t, err)
	cms, err := informer.For[*corev1.ConfigMap](e.factory)
	require.NoError(t, err)
	_, err = informer.For[*corev1.Service](e.factory)
	require.NoError(t, err)
	var cmCalls atomic.Int64
	_, err = cms.AddEventHandler(informer.Handler[*corev1.ConfigMap]{
		OnAdd: func(*corev1.ConfigMap, bool) { cmCalls.Add(1) },
	}, informer.HandlerOptions{})
	require.NoError(t, err)
	rec := &recorder{}
	_, err = pods.AddEventHandler(rec.handler(), informer.HandlerOptions{})
	require.NoError(t, err)
	e.start(t)
	openAll := func() bool {
		_, p := counter.counts("pods")
		_, c := counter.counts("configmaps")
		_, s := counter.counts("services")
		return p == 1 && c == 1 && s == 1
	}
	require.Eventually(t, openAll, waitFor, 5*time.Millisecond, "every informer watches")
	podsOpened, _ := counter.counts("pods")
	svcOpened, _ := counter.counts("services")

	require.NoError(t, e.factory.Remove(e.ctx, "configmaps"))
	select {
	case <-cms.Done():
	default:
		t.Fatal("Remove returned before the informer's Run did")
	}
	_, cmOpen := counter.counts("configmaps")
	require.Equal(t, 0, cmOpen, "the removed informer's watch is closed")
	err = e.factory.Remove(e.ctx, "configmaps")
	require.True(t, errors.Is(err, informer.ErrNoSuchInformer), "removing twice: %v", err)

	// The removed informer hears nothing more; the others carry on, on the
	// watches they had.
	_, err = e.srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "late"}})
	require.NoError(t, err)
	_, err = e.srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p1"}})
	require.NoError(t, err)
	rec.waitFor(t, "add p1")
	require.Zero(t, cmCalls.Load(), "a removed informer's handler was called")
	opened, open := counter.counts("pods")
	require.Equal(t, [2]int{podsOpened, 1}, [2]int{opened, open}, "the pods watch was disturbed")
	opened, open = counter.counts("services")
	require.Equal(t, [2]int{svcOpened, 1}, [2]int{opened, open}, "the services watch was disturbed")
	_, present := e.factory.WaitForCacheSync(e.ctx)["configmaps"]
	require.False(t, present, "the factory still waits for a removed informer")

	// A later For makes a fresh informer, which lists what exists now.
	again, err := informer.For[*corev1.ConfigMap](e.factory)
	require.NoError(t, err)
	require.NotSame(t, cms, again)
	require.True(t, e.factory.WaitForCacheSync(e.ctx)["configmaps"])
	_, err = again.Lister().Get("default", "late")
	require.NoError(t, err)
}

// TestWaitForCacheSyncStopsWaitingForARemovedInformer: an informer that
// cannot sync, removed while WaitForCacheSync waits for it, is reported
// as not synced at once, not at the end of the wait's context.
func TestWaitForCacheSyncStopsWaitingForARemovedInformer(t *testing.T) {
	e := newEnv(t, informer.FactoryOptions{})
	e.srv.Faults().FailNext(fakeapi.Failure{Resource: "pods", Count: 1 << 20, Code: 500})
	pods, err := informer.For[*corev1.Pod](e.factory)
	require.NoError(t, err)
	e.factory.Start(e.ctx)
	result := make(chan map[string]bool, 1)
	go func() { result <- e.factory.WaitForCacheSync(e.ctx) }()
	// Let the wait begin: a few failed lists take a few backoffs.
	require.Eventually(t, func() bool { return pods.Stats().Backoffs >= 3 }, waitFor, time.Millisecond)
	require.NoError(t, e.factory.Remove(e.ctx, "pods"))
	select {
	case r := <-result:
		require.Equal(t, map[string]bool{"pods": false}, r)
	case <-time.After(waitFor):
		t.Fatal("WaitForCacheSync still waits for a removed informer")
	}
}

// TestRemoveBeforeStart: an informer removed before the factory started
// never runs, and its Done closes, so that code waiting on it is told.
func TestRemoveBeforeStart(t *testing.T) {
	e := newEnv(t, informer.FactoryOptions{})
	cms, err := informer.For[*corev1.ConfigMap](e.factory)
	require.NoError(t, err)
	require.NoError(t, e.factory.Remove(e.ctx, "configmaps"))
	select {
	case <-cms.Done():
	default:
		t.Fatal("Done is still open after Remove")
	}
	require.ErrorIs(t, cms.Run(e.ctx), informer.ErrAlreadyRunning, "a removed informer does not start")
}

// A program that stops watching one resource, and keeps the others.
func ExampleFactory_Remove() {
	srv := mustServe()
	defer srv.Close()
	factory := informer.NewFactory(rest.Config{Host: srv.URL()}, informer.FactoryOptions{})
	_, _ = informer.For[*corev1.Pod](factory)
	cms, _ := informer.For[*corev1.ConfigMap](factory)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	factory.Start(ctx)
	defer factory.Shutdown()
	factory.WaitForCacheSync(ctx)

	if err := factory.Remove(ctx, "configmaps"); err != nil {
		log.Fatal(err)
	}
	<-cms.Done() // already closed: Remove waited for it
	fmt.Println(factory.WaitForCacheSync(ctx))
	// Output: map[pods:true]
}
