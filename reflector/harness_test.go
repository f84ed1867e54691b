package reflector

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// waitFor is how long a test waits for the reflector to reach a point.
// Generous: under -race on a shared 2-core machine a goroutine may be
// descheduled for a while; passing tests never wait it out.
const waitFor = 10 * time.Second

// ---- a ListerWatcher the test answers call by call ----

// call is one List or Watch call the reflector made, waiting for the test's
// answer.
type call struct {
	verb  string // "list" or "watch"
	opts  metav1.ListOptions
	reply chan reply
}

type reply struct {
	obj runtime.Object
	w   watch.Interface
	err error
}

// scriptLW hands each call to the test (through calls) and returns what the
// test answers. Safe for concurrent use.
type scriptLW struct {
	calls chan *call
}

func newScriptLW() *scriptLW { return &scriptLW{calls: make(chan *call)} }

func (l *scriptLW) do(ctx context.Context, verb string, opts metav1.ListOptions) reply {
	c := &call{verb: verb, opts: opts, reply: make(chan reply, 1)}
	select {
	case l.calls <- c:
	case <-ctx.Done():
		return reply{err: ctx.Err()}
	}
	select {
	case rp := <-c.reply:
		return rp
	case <-ctx.Done():
		return reply{err: ctx.Err()}
	}
}

func (l *scriptLW) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	rp := l.do(ctx, "list", opts)
	return rp.obj, rp.err
}

func (l *scriptLW) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	rp := l.do(ctx, "watch", opts)
	return rp.w, rp.err
}

// next waits for the reflector's next call and checks its verb.
func (l *scriptLW) next(t *testing.T, verb string) *call {
	t.Helper()
	select {
	case c := <-l.calls:
		require.Equal(t, verb, c.verb, "call options: %+v", c.opts)
		return c
	case <-time.After(waitFor):
		t.Fatalf("no %s call within %v", verb, waitFor)
		return nil
	}
}

func (c *call) list(obj runtime.Object, err error) { c.reply <- reply{obj: obj, err: err} }
func (c *call) watch(w watch.Interface, err error) { c.reply <- reply{w: w, err: err} }

// ---- a Store that records what it is told ----

// recStore records every call as a line, and the objects it holds.
// Safe for concurrent use.
type recStore struct {
	mu      sync.Mutex // guards all fields
	ops     []string
	objs    map[string]runtime.Object
	changed chan struct{}
}

func newRecStore() *recStore {
	return &recStore{objs: map[string]runtime.Object{}, changed: make(chan struct{})}
}

func key(obj runtime.Object) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Sprintf("<%T>", obj)
	}
	return objectKey(m)
}

func rvOf(obj runtime.Object) string {
	m, _ := meta.Accessor(obj)
	return m.GetResourceVersion()
}

func (s *recStore) record(method, line string, apply func()) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	apply()
	s.ops = append(s.ops, line)
	close(s.changed)
	s.changed = make(chan struct{})
	return nil
}

func (s *recStore) Add(obj runtime.Object) error {
	return s.record("add", "add "+key(obj)+"@"+rvOf(obj), func() { s.objs[key(obj)] = obj })
}

func (s *recStore) Update(obj runtime.Object) error {
	return s.record("update", "update "+key(obj)+"@"+rvOf(obj), func() { s.objs[key(obj)] = obj })
}

func (s *recStore) Delete(obj runtime.Object) error {
	return s.record("delete", "delete "+key(obj)+"@"+rvOf(obj), func() { delete(s.objs, key(obj)) })
}

func (s *recStore) Replace(list []runtime.Object, rv string) error {
	keys := make([]string, len(list))
	for i, o := range list {
		keys[i] = key(o)
	}
	return s.record("replace", fmt.Sprintf("replace [%s]@%s", strings.Join(keys, " "), rv), func() {
		s.objs = map[string]runtime.Object{}
		for _, o := range list {
			s.objs[key(o)] = o
		}
	})
}

func (s *recStore) Resync() error { return s.record("resync", "resync", func() {}) }

func (s *recStore) Bookmark(rv string) error { return s.record("bookmark", "bookmark@"+rv, func() {}) }

// waitOps waits until the store has recorded n operations and returns them.
func (s *recStore) waitOps(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.After(waitFor)
	for {
		s.mu.Lock()
		ops, changed := append([]string(nil), s.ops...), s.changed
		s.mu.Unlock()
		if len(ops) >= n {
			return ops
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("waited for %d store operations, have %q", n, ops)
		}
	}
}

// ---- the harness: a running reflector wired to the fakes ----

type harness struct {
	t     *testing.T
	lw    *scriptLW
	store *recStore
	clk   *fakeClock
	r     *Reflector
}

// start runs a reflector with opts (clock, Rand and OnError are set here)
// until the test ends, then checks that Run returned and nothing leaked.
func start(t *testing.T, lw *scriptLW, opts Options) *harness {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed=%d", seed)
	h := &harness{t: t, lw: lw, store: newRecStore(), clk: newFakeClock()}
	opts.clock = h.clk
	opts.Rand = rand.New(rand.NewPCG(seed, seed))
	opts.OnError = func(err error) {
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("OnError got %T, want *Error", err)
		}
	}
	h.r = New(lw, h.store, opts)
	stop := runInBackground(t, h.r)
	t.Cleanup(func() {
		stop()
		require.Equal(t, StateStopped, h.r.State())
		goleak.VerifyNone(t)
	})
	return h
}

// waitRV waits until the reflector has published rv as its progress (the
// store sees an event just before the reflector records its RV).
func (h *harness) waitRV(rv string) {
	h.t.Helper()
	require.Eventually(h.t, func() bool { return h.r.LastSyncResourceVersion() == rv }, waitFor, time.Millisecond,
		"last RV stayed %q, want %q", h.r.LastSyncResourceVersion(), rv)
}

// sync answers the first list with pods at rv and returns the watch call
// that follows it, unanswered.
func (h *harness) sync(rv string, pods ...*corev1.Pod) *call {
	h.t.Helper()
	h.lw.next(h.t, "list").list(podList(rv, "", pods...), nil)
	return h.lw.next(h.t, "watch")
}

// ---- objects ----

func pod(name, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

func podList(rv, cont string, pods ...*corev1.Pod) *corev1.PodList {
	l := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: rv, Continue: cont}}
	for _, p := range pods {
		l.Items = append(l.Items, *p)
	}
	return l
}

// runInBackground runs r on a goroutine of its own and returns a function
// that cancels it and waits for Run to return.
func runInBackground(t *testing.T, r *Reflector) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	return func() {
		t.Helper()
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(waitFor):
			t.Fatal("Run did not return after cancel")
		}
	}
}
