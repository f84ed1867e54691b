package informer_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/rest"
)

func rvOf(t *testing.T, obj runtime.Object) string {
	t.Helper()
	m, err := meta.Accessor(obj)
	require.NoError(t, err)
	return m.GetResourceVersion()
}

// ensurer is a controller whose one job is that configmap default/want
// exists: it creates it when its cache says it does not. Acting on a
// stale cache shows as a create the server refuses with AlreadyExists.
type ensurer struct {
	t        *testing.T
	e        *env
	cms      *informer.SharedInformer[*corev1.ConfigMap]
	exp      *informer.Expectations // nil: the controller does without
	creates  int
	stale    int // creates the server refused: the cache was stale
	deferred int // reconciles the expectations held back
	lastRV   string
}

func (c *ensurer) reconcile() {
	const key = "default/want"
	if c.exp != nil {
		ok, err := c.exp.Satisfied(key)
		require.NoError(c.t, err)
		if !ok {
			c.deferred++ // a real controller requeues the key with a delay
			return
		}
	}
	if _, err := c.cms.Lister().Get("default", "want"); err == nil {
		return
	}
	created, err := c.e.srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "want"}})
	if apierrors.IsAlreadyExists(err) {
		c.stale++
		return
	}
	require.NoError(c.t, err)
	c.creates++
	c.lastRV = rvOf(c.t, created)
	if c.exp != nil {
		c.exp.Expect(key, c.lastRV)
	}
}

func newEnsurer(t *testing.T, withExpectations bool) *ensurer {
	e := newEnv(t, informer.FactoryOptions{})
	cms, err := informer.For[*corev1.ConfigMap](e.factory)
	require.NoError(t, err)
	e.start(t)
	c := &ensurer{t: t, e: e, cms: cms}
	if withExpectations {
		c.exp = informer.NewExpectations(cms, time.Minute)
	}
	return c
}

// TestControllerActsOnAStaleCacheWithoutExpectations is the hostile case:
// the watch is held back (fakeapi's HoldWatches, a buffering proxy), so
// the controller's own create does not reach its cache, and the next
// reconcile creates again.
func TestControllerActsOnAStaleCacheWithoutExpectations(t *testing.T) {
	c := newEnsurer(t, false)
	c.e.srv.Faults().HoldWatches("configmaps")
	for range 3 {
		c.reconcile()
	}
	require.Equal(t, 1, c.creates)
	require.Equal(t, 2, c.stale, "without expectations the controller acts on its stale cache")
	c.e.srv.Faults().ResumeWatches("configmaps")
}

// TestControllerWithExpectationsNeverActsOnAStaleCache: the same held
// watch, with Expectations: the reconciles after the create wait, and
// once the watch is let go and the cache has applied the create, the next
// reconcile finds the object and does nothing.
func TestControllerWithExpectationsNeverActsOnAStaleCache(t *testing.T) {
	c := newEnsurer(t, true)
	c.e.srv.Faults().HoldWatches("configmaps")
	for range 3 {
		c.reconcile()
	}
	require.Equal(t, [3]int{1, 0, 2}, [3]int{c.creates, c.stale, c.deferred})

	// Staleness shows: the cache is behind the write, and WaitFor waits.
	require.True(t, olderThan(c.cms.Freshness().AppliedResourceVersion, c.lastRV), "%+v, wrote at %s", c.cms.Freshness(), c.lastRV)
	short, cancel := context.WithTimeout(c.e.ctx, 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, c.cms.WaitFor(short, c.lastRV), context.DeadlineExceeded)

	c.e.srv.Faults().ResumeWatches("configmaps")
	require.NoError(t, c.cms.WaitFor(c.e.ctx, c.lastRV))
	_, err := c.cms.Lister().Get("default", "want")
	require.NoError(t, err, "WaitFor returned before the cache held the write")
	for range 3 {
		c.reconcile()
	}
	require.Equal(t, [3]int{1, 0, 2}, [3]int{c.creates, c.stale, c.deferred}, "a reconcile acted, or waited, after the cache caught up")
}

func olderThan(a, b string) bool {
	if a == "" {
		return true // nothing applied yet
	}
	var x, y int
	_, errA := fmt.Sscan(a, &x)
	_, errB := fmt.Sscan(b, &y)
	return errA == nil && errB == nil && x < y
}

// TestWaitForRefusesToGuess: resourceVersions that are not numbers are not
// compared; a stopped informer stops the wait.
func TestWaitForRefusesToGuess(t *testing.T) {
	e := newEnv(t, informer.FactoryOptions{})
	cms, err := informer.For[*corev1.ConfigMap](e.factory)
	require.NoError(t, err)
	e.start(t)
	require.ErrorIs(t, cms.WaitFor(e.ctx, "abc"), informer.ErrRVNotComparable)
	_, err = e.srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return cms.AppliedResourceVersion() > "0" }, waitFor, time.Millisecond)
	require.NoError(t, cms.WaitFor(e.ctx, cms.AppliedResourceVersion()), "the cache has what it applied")

	exp := informer.NewExpectations(cms, time.Minute)
	exp.Expect("default/x", "opaque")
	ok, err := exp.Satisfied("default/x")
	require.False(t, ok)
	require.ErrorIs(t, err, informer.ErrRVNotComparable)

	waiting := make(chan error, 1)
	go func() { waiting <- cms.WaitFor(context.Background(), "999999999") }()
	require.NoError(t, e.factory.Remove(e.ctx, "configmaps"))
	require.ErrorIs(t, <-waiting, informer.ErrInformerStopped)
}

// TestExpectationGivesUpAfterItsTimeout: a write whose event never comes
// does not block its key for ever, and the give-up is said.
func TestExpectationGivesUpAfterItsTimeout(t *testing.T) {
	exp := informer.NewExpectations(fixedRV("5"), 10*time.Millisecond)
	exp.Expect("k", "7")
	ok, err := exp.Satisfied("k")
	require.False(t, ok)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		ok, err := exp.Satisfied("k")
		return ok && errors.Is(err, informer.ErrExpectationExpired)
	}, waitFor, time.Millisecond)
	ok, err = exp.Satisfied("k")
	require.True(t, ok, "given up, and forgotten")
	require.NoError(t, err)

	exp.Expect("k", "4")
	ok, err = exp.Satisfied("k")
	require.True(t, ok, "the cache is past it")
	require.NoError(t, err)
}

type fixedRV string

func (f fixedRV) AppliedResourceVersion() string { return string(f) }

// A controller that creates an object and must not act on it again before
// its cache has seen the create: Expect after the write, Satisfied before
// the next read; or, inline, WaitFor.
func ExampleExpectations() {
	srv := mustServe()
	defer srv.Close()
	factory := informer.NewFactory(rest.Config{Host: srv.URL()}, informer.FactoryOptions{})
	cms, err := informer.For[*corev1.ConfigMap](factory)
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	factory.Start(ctx)
	defer factory.Shutdown()
	factory.WaitForCacheSync(ctx)
	exp := informer.NewExpectations(cms, time.Minute)

	created, err := srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"}})
	if err != nil {
		log.Fatal(err)
	}
	rv := created.(*corev1.ConfigMap).ResourceVersion
	exp.Expect("default/settings", rv)

	// Later, in the reconciler: act only on a cache that holds the write.
	if ok, _ := exp.Satisfied("default/settings"); !ok {
		// requeue the key; here, wait for the cache instead
		if err := cms.WaitFor(ctx, rv); err != nil {
			log.Fatal(err)
		}
	}
	ok, _ := exp.Satisfied("default/settings")
	_, err = cms.Lister().Get("default", "settings")
	fmt.Println("satisfied:", ok, "cached:", err == nil)
	// Output: satisfied: true cached: true
}

// TestWaitForIsNeverAheadOfTheCache: after WaitFor(rv) returns, the cache
// holds every write up to rv, whether the informer applies events inline
// (few handlers) or on its consumer goroutine (many), while other writes
// keep coming.
func TestWaitForIsNeverAheadOfTheCache(t *testing.T) {
	for _, handlers := range []int{0, 20} {
		t.Run(fmt.Sprintf("handlers=%d", handlers), func(t *testing.T) {
			e := newEnv(t, informer.FactoryOptions{})
			cms, err := informer.For[*corev1.ConfigMap](e.factory)
			require.NoError(t, err)
			for range handlers {
				_, err := cms.AddEventHandler(informer.Handler[*corev1.ConfigMap]{}, informer.HandlerOptions{})
				require.NoError(t, err)
			}
			e.start(t)
			noise := make(chan struct{})
			go func() { // writes that keep the queue busy
				defer close(noise)
				for i := range 200 {
					_, _ = e.srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "noise", Name: fmt.Sprint("n", i)}})
				}
			}()
			for i := range 50 {
				name := fmt.Sprint("c", i)
				created, err := e.srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}})
				require.NoError(t, err)
				require.NoError(t, cms.WaitFor(e.ctx, rvOf(t, created)))
				_, err = cms.Lister().Get("default", name)
				require.NoError(t, err, "WaitFor(%s) returned before the cache held %s", rvOf(t, created), name)
			}
			<-noise
		})
	}
}
