package reflector

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// A harness for the tests that need the reflector's insides, run inside a
// testing/synctest bubble as the scripts are (script_test.go): time stands
// still while the reflector works and moves only when the test sleeps, and
// every wait below is synctest.Wait, never a timeout, so a test that fails
// fails at once and the same way every time.

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

// bubbleLW hands each call to the test (through calls) and returns what the
// test answers. Safe for concurrent use.
type bubbleLW struct {
	calls chan *call
}

func newBubbleLW() *bubbleLW { return &bubbleLW{calls: make(chan *call, 1)} }

func (l *bubbleLW) do(ctx context.Context, verb string, opts metav1.ListOptions) reply {
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

func (l *bubbleLW) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	rp := l.do(ctx, "list", opts)
	return rp.obj, rp.err
}

func (l *bubbleLW) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	rp := l.do(ctx, "watch", opts)
	return rp.w, rp.err
}

// next waits until the bubble is blocked, and returns the call the
// reflector is blocked in, which must be of verb.
func (l *bubbleLW) next(t *testing.T, verb string) *call {
	t.Helper()
	synctest.Wait()
	select {
	case c := <-l.calls:
		require.Equal(t, verb, c.verb, "call options: %+v", c.opts)
		return c
	default:
		t.Fatalf("the reflector is blocked, but not in a %s call", verb)
		return nil
	}
}

// none checks, once the bubble is blocked, that the reflector is not
// blocked in a call.
func (l *bubbleLW) none(t *testing.T) {
	t.Helper()
	synctest.Wait()
	select {
	case c := <-l.calls:
		t.Fatalf("unexpected %s call: %+v", c.verb, c.opts)
	default:
	}
}

func (c *call) list(obj runtime.Object, err error) { c.reply <- reply{obj: obj, err: err} }
func (c *call) watch(w watch.Interface, err error) { c.reply <- reply{w: w, err: err} }

// ---- a Store that records what it is told ----

// recStore records every call as a line. Safe for concurrent use.
type recStore struct {
	mu  sync.Mutex // guards log
	log []string
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

func (s *recStore) record(line string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, line)
	return nil
}

func (s *recStore) Add(obj runtime.Object) error {
	return s.record("add " + key(obj) + "@" + rvOf(obj))
}
func (s *recStore) Update(obj runtime.Object) error {
	return s.record("update " + key(obj) + "@" + rvOf(obj))
}
func (s *recStore) Delete(obj runtime.Object) error {
	return s.record("delete " + key(obj) + "@" + rvOf(obj))
}
func (s *recStore) Resync() error            { return s.record("resync") }
func (s *recStore) Bookmark(rv string) error { return s.record("bookmark@" + rv) }

func (s *recStore) Replace(list []runtime.Object, rv string) error {
	keys := make([]string, len(list))
	for i, o := range list {
		keys[i] = key(o)
	}
	return s.record(fmt.Sprintf("replace [%s]@%s", strings.Join(keys, " "), rv))
}

// ops waits until the bubble is blocked, and returns every call so far.
func (s *recStore) ops() []string {
	synctest.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

// ---- running it ----

// runInBubble runs r on a goroutine of the bubble and returns a function
// that cancels it and checks that Run returned nil and left the reflector
// Stopped.
func runInBubble(t *testing.T, r *Reflector) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	return func() {
		t.Helper()
		cancel()
		synctest.Wait()
		select {
		case err := <-done:
			assert.NoError(t, err)
			assert.Equal(t, StateStopped, r.State())
		default:
			t.Fatal("Run did not return after cancel")
		}
	}
}

// advance lets d of the bubble's time pass, and returns once the bubble is
// blocked again.
func advance(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
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
