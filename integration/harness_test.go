package integration

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/reflector"
	"github.com/seed31a95821/informer/reflector/wire"
	"github.com/seed31a95821/informer/rest"
)

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// Pods and config maps as the informers name them.
var (
	podsResource       = apiresource.Guess(corev1.SchemeGroupVersion.WithKind("Pod"))
	configMapsResource = apiresource.Guess(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
)

// newListerWatcher builds a ListerWatcher for res on a rest.Client for
// cfg, failing the test if either refuses.
func newListerWatcher(t testing.TB, cfg rest.Config, res apiresource.Resource, opts wire.Options) *wire.ListerWatcher {
	t.Helper()
	rc, err := rest.New(cfg)
	require.NoError(t, err)
	lw, err := wire.New(rc, res, opts)
	require.NoError(t, err)
	return lw
}

const converged = 30 * time.Second

// quick keeps the real retry and watchdog machinery, with figures small
// enough for tests: backoffs of milliseconds, bookmarks every 100ms.
func quick() reflector.Options {
	return reflector.Options{Tunables: quickInformer()}
}

// quickInformer is quick for an informer's reflector.
func quickInformer() informer.ReflectorOptions {
	return informer.ReflectorOptions{
		Backoff:          reflector.Backoff{Initial: 10 * time.Millisecond, Max: 200 * time.Millisecond},
		BookmarkInterval: 100 * time.Millisecond,
		StuckWatchFactor: 3,
		WatchListTimeout: 2 * time.Second,
	}
}

// run is one reflector, over real HTTP, feeding a mapStore.
type run struct {
	srv   *fakeapi.Server
	store *mapStore
	refl  *reflector.Reflector
	errs  *errorLog
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

func newServer(t *testing.T, pods int) *fakeapi.Server {
	t.Helper()
	srv, err := fakeapi.NewServer(fakeapi.Options{BookmarkInterval: 100 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	if pods > 0 {
		require.NoError(t, srv.SeedPods([]string{"shop", "blog"}, pods))
	}
	return srv
}

// startReflector runs a reflector until the test ends. wrap, when not nil,
// sits between the reflector and the HTTP client, to inject what the server
// cannot.
func startReflector(t *testing.T, srv *fakeapi.Server, opts reflector.Options, contentType string,
	wrap func(reflector.ListerWatcher) reflector.ListerWatcher) *run {
	t.Helper()
	return startReflectorAt(t, srv, srv.URL(), opts, contentType, wrap)
}

// startReflectorAt is startReflector with the client pointed at host, which
// may be a proxy in front of srv.
func startReflectorAt(t *testing.T, srv *fakeapi.Server, host string, opts reflector.Options, contentType string,
	wrap func(reflector.ListerWatcher) reflector.ListerWatcher) *run {
	t.Helper()
	return startReflectorWith(t, srv, rest.Config{Host: host, ContentType: contentType}, opts, wrap)
}

// startReflectorWith is startReflector with the whole client configuration
// given, for the limits it holds.
func startReflectorWith(t *testing.T, srv *fakeapi.Server, cfg rest.Config, opts reflector.Options,
	wrap func(reflector.ListerWatcher) reflector.ListerWatcher) *run {
	t.Helper()
	lw := newListerWatcher(t, cfg, podsResource, wire.Options{})
	var rlw reflector.ListerWatcher = lw
	if wrap != nil {
		rlw = wrap(lw)
	}
	r := &run{srv: srv, store: newMapStore(), errs: &errorLog{}}
	opts.ExpectedType = &corev1.Pod{}
	opts.OnError = r.errs.add
	r.refl = reflector.New(rlw, r.store, opts)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.refl.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	r.logErrors(t)
	return r
}

// synced is how most scenarios begin: a server with pods, a reflector with
// the quick options over contentType, a churn generator, and the store
// already equal to the server.
func synced(t *testing.T, pods int, contentType string) (*fakeapi.Server, *run, *churn) {
	t.Helper()
	srv := newServer(t, pods)
	r := startReflector(t, srv, quick(), contentType, nil)
	c := newChurn(t, srv)
	r.requireConverged(t)
	return srv, r, c
}

// serverState is what the store must converge to: key -> resourceVersion.
func serverState(t *testing.T, srv *fakeapi.Server) map[string]string {
	t.Helper()
	objs, err := srv.Objects(podsGVR)
	require.NoError(t, err)
	state := make(map[string]string, len(objs))
	for _, o := range objs {
		key, rv, err := keyAndRV(o)
		require.NoError(t, err)
		state[key] = rv
	}
	return state
}

// requireConverged waits until the store equals the server, and says how
// they differ if they never do.
func (r *run) requireConverged(t *testing.T) {
	t.Helper()
	var want, got map[string]string
	ok := waitUntil(converged, func() bool {
		want, got = serverState(t, r.srv), r.store.snapshot()
		return fmt.Sprint(want) == fmt.Sprint(got)
	})
	require.True(t, ok, "store never converged: %d objects on the server, %d in the store\nerrors: %v",
		len(want), len(got), r.errs.all())
}

func (r *run) errorsOf(kind reflector.Kind) int64 { return r.refl.Stats().Errors[kind] }

// deleteStored deletes n of the pods the store holds, on the server only.
// Called while no watch can report it, it leaves the store converging only
// through a relist that removes what the server no longer lists; churn
// alone deletes only pods the store has not seen yet.
func (r *run) deleteStored(t *testing.T, n int) {
	t.Helper()
	keys := slices.Sorted(maps.Keys(r.store.snapshot()))
	require.GreaterOrEqual(t, len(keys), n, "the store holds too few pods")
	for _, key := range keys[:n] {
		ns, name, _ := strings.Cut(key, "/")
		require.NoError(t, r.srv.Delete(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}))
	}
}

// requireNothingResent fails t if the server sent a change (neither a
// bookmark nor an initial event) with a resourceVersion up to upTo on more
// than one watch. Convergence alone cannot tell a watch resumed from the
// last resourceVersion from one resumed from further back (the snapshot's,
// say): the server still has the history, and the replay it sends changes
// nothing in the store. Only the replay itself shows.
//
// upTo is the store's newestRV: the reflector has read every change up to
// it. A change sent on a connection that is then cut, or on a watch the
// watchdog gives up on, may rightly be sent again: callers take upTo before
// such a fault, or keep it out.
func requireNothingResent(t *testing.T, srv *fakeapi.Server, upTo uint64) {
	t.Helper()
	firstSentOn := map[string]uint64{}
	for _, e := range srv.SentEvents() {
		if e.Type == watch.Bookmark || e.Type == watch.Error || e.InitialEvent {
			continue
		}
		rv, err := strconv.ParseUint(e.ResourceVersion, 10, 64)
		require.NoError(t, err)
		if rv > upTo {
			continue
		}
		change := fmt.Sprintf("%s %s/%s rv=%d", e.Type, e.Namespace, e.Name, rv)
		if id, ok := firstSentOn[change]; ok && id != e.WatchID {
			t.Fatalf("%s was sent on watch %d and again on watch %d: a watch resumed from before what the store had read",
				change, id, e.WatchID)
		}
		firstSentOn[change] = e.WatchID
	}
}

// logErrors shows what the reflector met, for a failing scenario's reader.
func (r *run) logErrors(t *testing.T) {
	t.Cleanup(func() {
		if t.Failed() {
			for _, err := range r.errs.all() {
				t.Logf("reflector error (%v): %v", reflector.KindOf(err), err)
			}
		}
	})
}

// waitUntil polls cond (a cheap in-memory comparison) until it holds or the
// deadline passes. It is a condition wait with a deadline, not a sleep.
func waitUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cond()
}

// churn makes n writes through the server's Go API: creates, label updates
// and deletes, in a seeded order (the seed is logged).
type churn struct {
	srv  *fakeapi.Server
	rng  *rand.Rand
	live []string
	next int
}

func newChurn(t *testing.T, srv *fakeapi.Server) *churn {
	seed := time.Now().UnixNano()
	t.Logf("churn seed=%d", seed)
	return &churn{srv: srv, rng: rand.New(rand.NewPCG(uint64(seed), 1))}
}

func (c *churn) writes(t *testing.T, n int) {
	t.Helper()
	require.NoError(t, c.tryWrites(n))
}

// tryWrites is writes for a goroutine other than the test's, which may not
// stop the test: it returns the first error instead.
func (c *churn) tryWrites(n int) error {
	for range n {
		switch r := c.rng.IntN(10); {
		case r < 4 || len(c.live) == 0:
			name := fmt.Sprintf("churn-%05d", c.next)
			c.next++
			if _, err := c.srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}}); err != nil {
				return err
			}
			c.live = append(c.live, name)
		case r < 6:
			i := c.rng.IntN(len(c.live))
			name := c.live[i]
			c.live = append(c.live[:i], c.live[i+1:]...)
			if err := c.srv.Delete(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}}); err != nil {
				return err
			}
		default:
			name := c.live[c.rng.IntN(len(c.live))]
			if _, err := c.srv.Update(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name,
				Labels: map[string]string{"v": fmt.Sprint(c.rng.IntN(1000))}}}); err != nil {
				return err
			}
		}
	}
	return nil
}
