package reflector

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// The reflector's own cost per watch event, decoding excluded (that is the
// wire's): type check, metadata access, store call, resourceVersion and
// counters. Run: go test -run=^$ -bench=. -benchmem ./reflector/

type nopStore struct{}

func (nopStore) Add(runtime.Object) error               { return nil }
func (nopStore) Update(runtime.Object) error            { return nil }
func (nopStore) Delete(runtime.Object) error            { return nil }
func (nopStore) Replace([]runtime.Object, string) error { return nil }
func (nopStore) Resync() error                          { return nil }
func (nopStore) Bookmark(string) error                  { return nil }

func BenchmarkHandleEvent(b *testing.B) {
	r := New(&ListWatch{}, nopStore{}, Options{ExpectedType: &corev1.Pod{}})
	ev := watch.Event{Type: watch.Modified, Object: pod("a", "12")}
	s := watching{rv: "1"}
	b.ReportAllocs()
	for b.Loop() {
		if err := r.handleEvent(ev, &s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHandleEventScoped is BenchmarkHandleEvent with every part of a
// scope set (scope.go): a namespace, a label selector and a field rule on
// the name, each checked for every event.
func BenchmarkHandleEventScoped(b *testing.B) {
	lw := &ListWatch{Namespace: "ns", LabelSelector: "app=web", FieldSelector: "metadata.name!=b"}
	r := New(lw, nopStore{}, Options{ExpectedType: &corev1.Pod{}})
	obj := pod("a", "12")
	obj.Labels = map[string]string{"app": "web"}
	ev := watch.Event{Type: watch.Modified, Object: obj}
	s := watching{rv: "1"}
	b.ReportAllocs()
	for b.Loop() {
		if err := r.handleEvent(ev, &s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConsume adds the event loop: channel receive, watchdog
// bookkeeping and the select. A producer goroutine feeds the channel, as
// the wire's decoding goroutine does.
func BenchmarkConsume(b *testing.B) {
	r := New(&ListWatch{}, nopStore{}, Options{ExpectedType: &corev1.Pod{}})
	obj := pod("a", "12")
	ch := make(chan watch.Event, 1024)
	go func() {
		defer close(ch)
		for i := 0; i < b.N; i++ {
			ch <- watch.Event{Type: watch.Modified, Object: obj}
		}
	}()
	w := watch.NewProxyWatcher(ch)
	b.ReportAllocs()
	b.ResetTimer()
	err := r.consume(context.Background(), w, &watching{rv: "1"})
	b.StopTimer()
	w.Stop()
	if n := r.Stats().Events[watch.Modified]; err != nil || n != int64(b.N) {
		b.Fatalf("consumed %d of %d: %v", n, b.N, err)
	}
}

// BenchmarkWentBack is the resourceVersion check handleEvent makes on
// every event: two 10-digit RVs, as a large cluster has them.
func BenchmarkWentBack(b *testing.B) {
	b.ReportAllocs()
	back := false
	for b.Loop() {
		back = back != wentBack("4815162342", "4815162343")
	}
	if back {
		b.Fatal("an event one later went back")
	}
}
