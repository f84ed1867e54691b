package deltafifo

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
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

// batchLine writes one batch on one line, as a consumer sees it: "relist"
// if it is one, then every key with its deltas, oldest first (a tombstone
// as Tombstone, each with its object's resourceVersion), then the batch's
// resourceVersion, if any. For example "ns/a: Added(1) Updated(3) rv=5".
func batchLine(b Batch) string {
	var words []string
	if b.Relist {
		words = append(words, "relist")
	}
	for _, it := range b.Items {
		words = append(words, it.Key+":")
		for _, d := range it.Deltas {
			kind := string(d.Type)
			if d.FinalStateUnknown {
				kind = "Tombstone"
			}
			rv := "?"
			if m, err := meta.Accessor(d.Object); err == nil {
				rv = m.GetResourceVersion()
			}
			words = append(words, kind+"("+rv+")")
		}
	}
	if b.ResourceVersion != "" {
		words = append(words, "rv="+b.ResourceVersion)
	}
	return strings.Join(words, " ")
}
