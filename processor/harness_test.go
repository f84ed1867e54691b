package processor

import (
	"context"
	"iter"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitFor is the longest any test waits for something that should happen
// promptly; reaching it means the behaviour is broken, not slow. In a
// synctest bubble it is the bubble's time, which jumps to the deadline as
// soon as every goroutine is blocked: there a broken test fails at once.
const waitFor = 10 * time.Second

func pod(ns, name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

func addOf(ns, name string) Notification {
	return Notification{Type: Add, Key: ns + "/" + name, Object: pod(ns, name)}
}

// recorder is a handler that sends every notification it receives to a
// channel, so a test can wait for each one.
type recorder struct{ got chan Notification }

func newRecorder() *recorder { return &recorder{got: make(chan Notification, 1<<16)} }

func (r *recorder) Handle(n Notification) { r.got <- n }

// next returns the next notification the recorder received, failing the test
// if none arrives in time.
func (r *recorder) next(t *testing.T) Notification {
	t.Helper()
	select {
	case n := <-r.got:
		return n
	case <-time.After(waitFor):
		t.Fatal("timed out waiting for a notification")
		return Notification{}
	}
}

// nextKeys returns the keys of the next k notifications.
func (r *recorder) nextKeys(t *testing.T, k int) []string {
	t.Helper()
	keys := make([]string, 0, k)
	for range k {
		keys = append(keys, r.next(t).Key)
	}
	return keys
}

// none asserts that no notification is waiting right now.
func (r *recorder) none(t *testing.T) {
	t.Helper()
	select {
	case n := <-r.got:
		t.Fatalf("unexpected notification %s %q", n.Type, n.Key)
	default:
	}
}

// gate is a handler that blocks in Handle until the test lets it through,
// one notification per release. entered reports each notification as Handle
// starts, so a test knows the handler is busy. When the test ends, the gate
// opens for good: a test that fails while its handler is stuck then reports
// its failure instead of leaving the goroutine blocked (which, in a synctest
// bubble, would end the whole run with a deadlock panic).
type gate struct {
	entered chan Notification
	release chan struct{}
	ended   chan struct{} // closed when the test ends
}

func newGate(t *testing.T) *gate {
	g := &gate{entered: make(chan Notification, 1<<16), release: make(chan struct{}), ended: make(chan struct{})}
	t.Cleanup(func() { close(g.ended) })
	return g
}

func (g *gate) Handle(n Notification) {
	g.entered <- n
	select {
	case <-g.release:
	case <-g.ended:
	}
}

// open lets k notifications through.
func (g *gate) open(t *testing.T, k int) {
	t.Helper()
	for range k {
		select {
		case g.release <- struct{}{}:
		case <-time.After(waitFor):
			t.Fatal("timed out releasing the gate")
		}
	}
}

func (g *gate) waitEntered(t *testing.T) Notification {
	t.Helper()
	select {
	case n := <-g.entered:
		return n
	case <-time.After(waitFor):
		t.Fatal("timed out waiting for the handler to start")
		return Notification{}
	}
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(waitFor):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// startProcessor runs p until the test ends, and checks Run returns.
func startProcessor(t *testing.T, p *Processor) (cancel func(), runDone <-chan struct{}) {
	t.Helper()
	ctx, cancelCtx := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Run(ctx)
	}()
	t.Cleanup(func() {
		cancelCtx()
		waitClosed(t, done, "Run to return")
	})
	return cancelCtx, done
}

// errSink collects the errors reported through Options.OnError.
type errSink struct {
	mu   sync.Mutex // guards errs
	errs []error
	ch   chan error
}

func newErrSink() *errSink { return &errSink{ch: make(chan error, 1024)} }

func (s *errSink) OnError(err error) {
	s.mu.Lock()
	s.errs = append(s.errs, err)
	s.mu.Unlock()
	s.ch <- err
}

func (s *errSink) next(t *testing.T) error {
	t.Helper()
	select {
	case err := <-s.ch:
		return err
	case <-time.After(waitFor):
		t.Fatal("timed out waiting for an error report")
		return nil
	}
}

// stateEntry is one object of an ordered test InitialObjects.
type stateEntry struct {
	key string
	obj runtime.Object
}

// orderedState is an InitialObjects that yields its objects in a fixed order, so
// tests can assert the order of a replay.
type orderedState []stateEntry

func (s orderedState) Len() int { return len(s) }

func (s orderedState) All() iter.Seq2[string, runtime.Object] {
	return func(yield func(string, runtime.Object) bool) {
		for _, k := range s {
			if !yield(k.key, k.obj) {
				return
			}
		}
	}
}

// stateOf keys objects "namespace/name", as the informer's cache does.
func stateOf(objs ...runtime.Object) orderedState {
	out := make(orderedState, len(objs))
	for i, o := range objs {
		m := o.(metav1.Object)
		out[i] = stateEntry{key: m.GetNamespace() + "/" + m.GetName(), obj: o}
	}
	return out
}
