package deltafifo

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAtomicRelist(t *testing.T) {
	ok := must(t)
	a1, a2, a3, a4, b1, c1 := pod("a", "1"), pod("a", "2"), pod("a", "3"), pod("a", "4"), pod("b", "1"), pod("c", "1")
	relist := func(rv string, its ...Item) Batch {
		return Batch{Relist: true, ResourceVersion: rv, Items: append([]Item{}, its...)}
	}
	single := func(it Item) Batch { return Batch{Items: []Item{it}} }
	cases := []struct {
		name  string
		known *store
		ops   func(q *Queue)
		want  []Batch
	}{{
		name:  "one batch: tombstones first, then the listed objects",
		known: newStore(a1, b1),
		ops:   func(q *Queue) { ok(q.Replace(objs(a2, c1), "10")) },
		want:  []Batch{relist("10", item("ns/b", tomb(b1)), item("ns/a", repl(a2)), item("ns/c", repl(c1)))},
	}, {
		name:  "deltas queued before the relist are delivered before it, in order",
		known: newStore(a1),
		ops: func(q *Queue) {
			ok(q.Update(a2))
			ok(q.Add(b1))
			ok(q.Replace(objs(a3), "5"))
		},
		want: []Batch{
			single(item("ns/a", upd(a2))),
			single(item("ns/b", add(b1))),
			relist("5", item("ns/b", tomb(b1)), item("ns/a", repl(a3))),
		},
	}, {
		name:  "deltas after the relist queue behind it, even for keys in line before it",
		known: newStore(a1),
		ops: func(q *Queue) {
			ok(q.Update(a2))
			ok(q.Replace(objs(a3), "5"))
			ok(q.Update(a4))
		},
		want: []Batch{
			single(item("ns/a", upd(a2))),
			relist("5", item("ns/a", repl(a3))),
			single(item("ns/a", upd(a4))),
		},
	}, {
		name:  "a delete of a key only the pending relist lists is news",
		known: newStore(),
		ops: func(q *Queue) {
			ok(q.Replace(objs(a1), "5"))
			ok(q.Delete(a1))
		},
		want: []Batch{relist("5", item("ns/a", repl(a1))), single(item("ns/a", del(a1)))},
	}, {
		name:  "a delete of a key the pending relist drops is ignored",
		known: newStore(a1),
		ops: func(q *Queue) {
			ok(q.Replace(nil, "5"))
			ok(q.Delete(a1))
		},
		want: []Batch{relist("5", item("ns/a", tomb(a1)))},
	}, {
		name:  "a second relist compares against the first, not the stale known objects",
		known: newStore(a1),
		ops: func(q *Queue) {
			ok(q.Replace(objs(b1), "5"))
			ok(q.Replace(objs(c1), "6"))
		},
		want: []Batch{
			relist("5", item("ns/a", tomb(a1)), item("ns/b", repl(b1))),
			relist("6", item("ns/b", tomb(b1)), item("ns/c", repl(c1))),
		},
	}, {
		name:  "a key re-added after the relist that dropped it is tombstoned by the next",
		known: newStore(),
		ops: func(q *Queue) {
			ok(q.Replace(nil, "5"))
			ok(q.Add(a1))
			ok(q.Replace(nil, "6"))
		},
		want: []Batch{
			relist("5"),
			single(item("ns/a", add(a1))),
			relist("6", item("ns/a", tomb(a1))),
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := New(Options{AtomicRelist: true, KnownObjects: tc.known})
			tc.ops(q)
			got := popAll(t, q, tc.known)
			for i := range got {
				for j := range got[i].Items {
					got[i].Items[j].InInitialList = false
				}
			}
			require.Equal(t, tc.want, got)
		})
	}
}

// TestAtomicPopBatchStopsAtRelist checks that a batch never straddles a
// relist: what comes before it, it, and what comes after are three batches.
func TestAtomicPopBatchStopsAtRelist(t *testing.T) {
	ok := must(t)
	known := newStore()
	q := New(Options{AtomicRelist: true, KnownObjects: known})
	ok(q.Add(pod("a", "1")))
	ok(q.Add(pod("b", "1")))
	ok(q.Replace(objs(pod("a", "2")), "7"))
	ok(q.Add(pod("c", "1")))
	var sizes []int
	var relists []bool
	for q.queuedUnits() > 0 {
		ok(q.PopBatch(t.Context(), 100, func(b Batch) error {
			known.apply(b)
			sizes = append(sizes, len(b.Items))
			relists = append(relists, b.Relist)
			return nil
		}))
	}
	require.Equal(t, []int{2, 2, 1}, sizes) // [a b] [tomb b, repl a] [c]
	require.Equal(t, []bool{false, true, false}, relists)
	require.Equal(t, map[string]bool{"ns/a": true, "ns/c": true}, keySet(known))
}

func keySet(s *store) map[string]bool {
	out := map[string]bool{}
	for _, k := range s.ListKeys() {
		out[k] = true
	}
	return out
}
