package deltafifo

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

func TestReplaceSequences(t *testing.T) {
	ok := must(t)
	foo5, bar6, baz7 := pod("foo", "5"), pod("bar", "6"), pod("baz", "7")
	three := []*corev1.Pod{foo5, bar6, baz7}
	runDeltaCases(t, []deltaCase{{
		name:  "a queued real delete absorbs the tombstone",
		known: three,
		ops: func(q *Queue) {
			ok(q.Delete(pod("baz", "10")))
			ok(q.Replace(objs(foo5), ""))
		},
		want: []Item{
			item("ns/baz", del(pod("baz", "10"))),
			item("ns/foo", repl(foo5)),
			item("ns/bar", tomb(bar6)),
		},
	}, {
		name:  "a queued add gets a tombstone with the queued object",
		known: three,
		ops: func(q *Queue) {
			ok(q.Add(pod("baz", "10")))
			ok(q.Replace(objs(foo5), ""))
		},
		want: []Item{
			item("ns/baz", add(pod("baz", "10")), tomb(pod("baz", "10"))),
			item("ns/foo", repl(foo5)),
			item("ns/bar", tomb(bar6)),
		},
	}, {
		name:  "deleted then re-added: the tombstone carries the newest queued object",
		known: three,
		ops: func(q *Queue) {
			ok(q.Delete(bar6))
			ok(q.Add(pod("bar", "100")))
			ok(q.Replace(objs(foo5), ""))
		},
		want: []Item{
			item("ns/bar", del(bar6), add(pod("bar", "100")), tomb(pod("bar", "100"))),
			item("ns/foo", repl(foo5)),
			item("ns/baz", tomb(baz7)),
		},
	}, {
		name:  "a second relist tombstones what the first one listed",
		known: three,
		opts:  Options{KeepAllUpdates: true}, // client-go's output, every Replaced kept
		ops: func(q *Queue) {
			ok(q.Replace(objs(pod("bar", "100"), foo5), ""))
			ok(q.Replace(objs(foo5), ""))
		},
		want: []Item{
			item("ns/bar", repl(pod("bar", "100")), tomb(pod("bar", "100"))),
			item("ns/foo", repl(foo5), repl(foo5)),
			item("ns/baz", tomb(baz7)),
		},
	}, {
		name:  "with compaction a second relist's Replaced replaces the first",
		known: three,
		ops: func(q *Queue) {
			ok(q.Replace(objs(pod("bar", "100"), foo5), ""))
			ok(q.Replace(objs(pod("bar", "101"), foo5), ""))
		},
		want: []Item{
			item("ns/bar", repl(pod("bar", "101"))),
			item("ns/foo", repl(foo5)),
			item("ns/baz", tomb(baz7)),
		},
	}, {
		name: "without known objects only queued keys get tombstones",
		ops: func(q *Queue) {
			ok(q.Add(pod("baz", "10")))
			ok(q.Replace(objs(foo5), ""))
		},
		want: []Item{
			item("ns/baz", add(pod("baz", "10")), tomb(pod("baz", "10"))),
			item("ns/foo", repl(foo5)),
		},
	}, {
		name:  "a relisted key after a queued delete gets its Replaced delta",
		known: []*corev1.Pod{pod("foo", "1")},
		ops: func(q *Queue) {
			ok(q.Delete(pod("foo", "1")))
			ok(q.Replace(objs(pod("foo", "2")), ""))
		},
		want: []Item{item("ns/foo", del(pod("foo", "1")), repl(pod("foo", "2")))},
	}, {
		name:  "tombstones of new keys are queued sorted by key",
		known: []*corev1.Pod{pod("c", "1"), pod("a", "1"), pod("b", "1")},
		ops: func(q *Queue) {
			ok(q.Replace(nil, ""))
		},
		want: []Item{item("ns/a", tomb(pod("a", "1"))), item("ns/b", tomb(pod("b", "1"))), item("ns/c", tomb(pod("c", "1")))},
	}, {
		name: "a list with a key twice keeps the later object",
		ops: func(q *Queue) {
			ok(q.Replace(objs(pod("a", "1"), pod("a", "2")), ""))
		},
		want: []Item{item("ns/a", repl(pod("a", "2")))},
	}})
}

// TestReplaceOnlyQueued runs client-go's "deletions for objects only in the
// queue" sequences with empty KnownObjects and without any: the answer must
// not depend on it, since the keys were never delivered.
func TestReplaceOnlyQueued(t *testing.T) {
	ok := must(t)
	obj, objV2 := pod("foo", "2"), pod("foo", "3")
	seqs := []struct {
		name string
		ops  func(q *Queue)
		want Deltas
	}{
		{"added then relisted without it", func(q *Queue) {
			ok(q.Add(obj))
			ok(q.Replace(nil, ""))
		}, Deltas{add(obj), tomb(obj)}},
		{"replaced then relisted without it", func(q *Queue) {
			ok(q.Add(obj))
			ok(q.Replace(objs(obj), ""))
			ok(q.Replace(nil, ""))
		}, Deltas{add(obj), repl(obj), tomb(obj)}},
		{"deleted: no tombstone", func(q *Queue) {
			ok(q.Add(obj))
			ok(q.Delete(obj))
			ok(q.Replace(nil, ""))
		}, Deltas{add(obj), del(obj)}},
		{"two relists replace it, a third drops it", func(q *Queue) {
			ok(q.Add(obj))
			ok(q.Replace(objs(obj), ""))
			ok(q.Replace(objs(obj), ""))
			ok(q.Replace(nil, ""))
		}, Deltas{add(obj), repl(obj), tomb(obj)}}, // compacted: client-go keeps both Replaced
		{"one tombstone across two relists", func(q *Queue) {
			ok(q.Add(obj))
			ok(q.Replace(nil, ""))
			ok(q.Replace(nil, "1"))
		}, Deltas{add(obj), tomb(obj)}},
		{"added, deleted, added again", func(q *Queue) {
			ok(q.Add(obj))
			ok(q.Delete(obj))
			ok(q.Add(objV2))
			ok(q.Replace(nil, ""))
		}, Deltas{add(obj), del(obj), add(objV2), tomb(objV2)}},
	}
	for _, s := range seqs {
		for _, known := range []*store{nil, newStore()} {
			opts := Options{}
			name := s.name + "/no known objects"
			if known != nil {
				opts.KnownObjects = known
				name = s.name + "/empty known objects"
			}
			t.Run(name, func(t *testing.T) {
				q := New(opts)
				s.ops(q)
				got := items(popAll(t, q, nil))
				require.Len(t, got, 1)
				require.Equal(t, s.want, got[0].Deltas)
			})
		}
	}
}

func TestResyncSequences(t *testing.T) {
	ok := must(t)
	foo5 := pod("foo", "5")
	runDeltaCases(t, []deltaCase{{
		name:  "resync queues Sync for a known key",
		known: []*corev1.Pod{foo5},
		ops:   func(q *Queue) { ok(q.Resync()) },
		want:  []Item{item("ns/foo", syn(foo5))},
	}, {
		name:  "resync skips a key with a pending delete",
		known: []*corev1.Pod{foo5},
		ops: func(q *Queue) {
			ok(q.Delete(pod("foo", "10")))
			ok(q.Resync())
		},
		want: []Item{item("ns/foo", del(pod("foo", "10")))},
	}, {
		name:  "resync skips a key with a pending update (it would carry stale state)",
		known: []*corev1.Pod{foo5},
		ops: func(q *Queue) {
			ok(q.Update(pod("foo", "6")))
			ok(q.Resync())
		},
		want: []Item{item("ns/foo", upd(pod("foo", "6")))},
	}, {
		name: "resync without known objects does nothing",
		ops:  func(q *Queue) { ok(q.Resync()) },
		want: nil,
	}, {
		name:  "resync is a no-op while an atomic relist is pending",
		known: []*corev1.Pod{foo5},
		opts:  Options{AtomicRelist: true},
		ops: func(q *Queue) {
			ok(q.Replace(objs(foo5), "9"))
			ok(q.Resync())
		},
		want: []Item{item("ns/foo", repl(foo5))},
	}})
}

// TestReplaceMarker checks that a per-key Replace ends with a marker batch
// carrying its resourceVersion, after every item of the Replace.
func TestReplaceMarker(t *testing.T) {
	ok := must(t)
	q := New(Options{KnownObjects: newStore(pod("gone", "1"))})
	ok(q.Add(pod("a", "1")))
	ok(q.Replace(objs(pod("a", "2"), pod("b", "2")), "20"))
	ok(q.Update(pod("a", "3"))) // joins a's place, before the marker: fine, a is then ahead of 20
	got := popAll(t, q, nil)
	require.Len(t, got, 4)
	require.Equal(t, "ns/a", got[0].Items[0].Key)
	require.Equal(t, Deltas{add(pod("a", "1")), upd(pod("a", "3"))}, got[0].Items[0].Deltas) // Replaced a@2 compacted
	require.Equal(t, "ns/b", got[1].Items[0].Key)
	require.Equal(t, Deltas{tomb(pod("gone", "1"))}, got[2].Items[0].Deltas)
	require.Equal(t, Batch{ResourceVersion: "20"}, got[3])
	for _, b := range got[:3] {
		require.Empty(t, b.ResourceVersion, "a per-key item does not know the store's version")
	}
}

func TestBookmark(t *testing.T) {
	ok := must(t)
	q := New(Options{})
	ok(q.Bookmark("1"))
	ok(q.Bookmark("2")) // nothing in between: replaces the first
	ok(q.Add(pod("a", "3")))
	ok(q.Bookmark("3"))
	ok(q.Update(pod("a", "4"))) // joins a's place before the marker
	ok(q.Bookmark("4"))         // the marker is still last: refreshed
	got := popAll(t, q, nil)
	require.Equal(t, []Batch{
		{ResourceVersion: "2"},
		{Items: []Item{item("ns/a", add(pod("a", "3")), upd(pod("a", "4")))}},
		{ResourceVersion: "4"},
	}, got)
}
