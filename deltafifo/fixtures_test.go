package deltafifo

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// pod returns a pod in namespace "ns" whose resourceVersion tells versions
// apart in assertions.
func pod(name, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

// Delta constructors, to keep expected histories on one line.
func add(o runtime.Object) Delta  { return Delta{Type: Added, Object: o} }
func upd(o runtime.Object) Delta  { return Delta{Type: Updated, Object: o} }
func del(o runtime.Object) Delta  { return Delta{Type: Deleted, Object: o} }
func repl(o runtime.Object) Delta { return Delta{Type: Replaced, Object: o} }
func syn(o runtime.Object) Delta  { return Delta{Type: Sync, Object: o} }
func tomb(o runtime.Object) Delta { return Delta{Type: Deleted, Object: o, FinalStateUnknown: true} }

// store is a KnownObjects backed by a map, standing in for the indexer. Its
// apply method is the consumer: it applies a batch the way an informer does.
type store struct {
	mu   sync.Mutex // guards objs
	objs map[string]runtime.Object
}

func newStore(objs ...*corev1.Pod) *store {
	s := &store{objs: map[string]runtime.Object{}}
	for _, o := range objs {
		s.objs["ns/"+o.Name] = o
	}
	return s
}

func (s *store) ListKeys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.objs))
}

func (s *store) Get(key string) (runtime.Object, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objs[key]
	return o, ok
}

func (s *store) snapshot() map[string]runtime.Object {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.objs)
}

// apply applies a batch: deltas in order per key, or a relist as a swap.
func (s *store) apply(b Batch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b.Relist {
		s.objs = map[string]runtime.Object{}
	}
	for _, it := range b.Items {
		for _, d := range it.Deltas {
			if d.Type == Deleted {
				delete(s.objs, it.Key)
			} else {
				s.objs[it.Key] = d.Object
			}
		}
	}
}

// queuedUnits is how many units wait in line (markers included).
func (q *Queue) queuedUnits() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.waiting.len()
}

// popAll pops until the line is empty and returns the batches, applying
// each to s if s is not nil.
func popAll(t *testing.T, q *Queue, s *store) []Batch {
	t.Helper()
	var out []Batch
	for q.queuedUnits() > 0 {
		err := q.Pop(context.Background(), func(b Batch) error {
			if s != nil {
				s.apply(b)
			}
			out = append(out, b)
			return nil
		})
		require.NoError(t, err)
	}
	return out
}

// items flattens batches into their items, dropping marker batches.
func items(batches []Batch) []Item {
	var out []Item
	for _, b := range batches {
		out = append(out, b.Items...)
	}
	return out
}

// item builds an expected Item.
func item(key string, ds ...Delta) Item { return Item{Key: key, Deltas: ds} }

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
