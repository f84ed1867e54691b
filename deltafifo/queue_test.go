package deltafifo

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// deltaCase is one scripted sequence of writes and the items it must pop,
// in order. Many are the classic sequences of client-go's DeltaFIFO tests,
// rewritten; the behaviour they pin down is the reference.
type deltaCase struct {
	name  string
	known []*corev1.Pod // nil: no KnownObjects at all
	opts  Options
	ops   func(q *Queue)
	want  []Item
}

func runDeltaCases(t *testing.T, cases []deltaCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			if tc.known != nil {
				opts.KnownObjects = newStore(tc.known...)
			}
			q := New(opts)
			tc.ops(q)
			got := items(popAll(t, q, nil))
			for i := range got {
				got[i].InInitialList = false // asserted by the HasSynced tests
			}
			require.Equal(t, tc.want, got)
			require.Zero(t, q.Stats().Depth)
		})
	}
}

func must(t *testing.T) func(error) {
	return func(err error) {
		t.Helper()
		require.NoError(t, err)
	}
}

func objs(ps ...*corev1.Pod) []runtime.Object {
	out := make([]runtime.Object, len(ps))
	for i, p := range ps {
		out[i] = p
	}
	return out
}

func TestWriteSequences(t *testing.T) {
	ok := must(t)
	foo5, bar6, baz7 := pod("foo", "5"), pod("bar", "6"), pod("baz", "7")
	runDeltaCases(t, []deltaCase{{
		name: "add, update, delete of one key pop as one item",
		ops: func(q *Queue) {
			ok(q.Add(pod("foo", "10")))
			ok(q.Update(pod("foo", "12")))
			ok(q.Delete(pod("foo", "15")))
		},
		want: []Item{item("ns/foo", add(pod("foo", "10")), upd(pod("foo", "12")), del(pod("foo", "15")))},
	}, {
		name: "without known objects a delete of an unqueued key is ignored",
		ops: func(q *Queue) {
			ok(q.Add(pod("foo", "10")))
			ok(q.Update(pod("bar", "15")))
			ok(q.Add(pod("qux", "17")))
			ok(q.Delete(pod("qux", "18")))
			ok(q.Delete(pod("baz", "20")))
		},
		want: []Item{
			item("ns/foo", add(pod("foo", "10"))),
			item("ns/bar", upd(pod("bar", "15"))),
			item("ns/qux", add(pod("qux", "17")), del(pod("qux", "18"))),
		},
	}, {
		name:  "a delete of a known key is queued",
		known: []*corev1.Pod{foo5, bar6, baz7},
		ops: func(q *Queue) {
			ok(q.Add(pod("foo", "10")))
			ok(q.Update(pod("bar", "15")))
			ok(q.Delete(pod("baz", "20")))
		},
		want: []Item{
			item("ns/foo", add(pod("foo", "10"))),
			item("ns/bar", upd(pod("bar", "15"))),
			item("ns/baz", del(pod("baz", "20"))),
		},
	}, {
		name:  "a delete of a queued but unknown key is queued",
		known: []*corev1.Pod{},
		ops: func(q *Queue) {
			ok(q.Add(pod("foo", "5")))
			ok(q.Delete(pod("foo", "6")))
		},
		want: []Item{item("ns/foo", add(pod("foo", "5")), del(pod("foo", "6")))},
	}, {
		name:  "two deletes collapse into the first",
		known: []*corev1.Pod{foo5},
		ops: func(q *Queue) {
			ok(q.Delete(pod("foo", "6")))
			ok(q.Delete(pod("foo", "7")))
		},
		want: []Item{item("ns/foo", del(pod("foo", "6")))},
	}, {
		name: "a re-added key keeps its place in line",
		ops: func(q *Queue) {
			ok(q.Add(pod("foo", "10")))
			ok(q.Add(pod("bar", "1")))
			ok(q.Add(pod("foo", "11")))
			ok(q.Add(pod("zab", "30")))
		},
		want: []Item{
			item("ns/foo", add(pod("foo", "10")), add(pod("foo", "11"))),
			item("ns/bar", add(pod("bar", "1"))),
			item("ns/zab", add(pod("zab", "30"))),
		},
	}, {
		name: "consecutive updates compact into the newest",
		ops: func(q *Queue) {
			ok(q.Add(pod("foo", "1")))
			for _, rv := range []string{"2", "3", "4"} {
				ok(q.Update(pod("foo", rv)))
			}
		},
		want: []Item{item("ns/foo", add(pod("foo", "1")), upd(pod("foo", "4")))},
	}, {
		name: "KeepAllUpdates keeps every update",
		opts: Options{KeepAllUpdates: true},
		ops: func(q *Queue) {
			ok(q.Add(pod("foo", "1")))
			ok(q.Update(pod("foo", "2")))
			ok(q.Update(pod("foo", "3")))
		},
		want: []Item{item("ns/foo", add(pod("foo", "1")), upd(pod("foo", "2")), upd(pod("foo", "3")))},
	}})
}

// TestLineJumpers pops between writes: a key popped and written again goes
// to the back of the line; it does not keep a place it no longer has.
func TestLineJumpers(t *testing.T) {
	ok := must(t)
	q := New(Options{})
	ok(q.Add(pod("foo", "10")))
	ok(q.Add(pod("bar", "1")))
	ok(q.Add(pod("foo", "11")))
	ok(q.Add(pod("foo", "13")))
	ok(q.Add(pod("zab", "30")))

	var got []string
	popOne := func() {
		t.Helper()
		ok(q.Pop(t.Context(), func(b Batch) error {
			got = append(got, b.Items[0].Deltas.Newest().Object.(*corev1.Pod).ResourceVersion)
			return nil
		}))
	}
	popOne()
	ok(q.Add(pod("foo", "14")))
	popOne()
	popOne()
	popOne()
	require.Equal(t, []string{"13", "1", "30", "14"}, got)
}

func TestBadInput(t *testing.T) {
	q := New(Options{})
	require.ErrorIs(t, q.Add(nil), ErrNilObject)
	require.ErrorIs(t, q.Update((*corev1.Pod)(nil)), ErrNilObject)
	require.ErrorIs(t, q.Delete(pod("", "1")), ErrNoName)
	require.ErrorIs(t, q.Replace(objs(pod("a", "1"), nil), "5"), ErrNilObject)
	require.ErrorIs(t, q.Bookmark(""), ErrInvalidArgument)
	require.ErrorIs(t, q.PopBatch(t.Context(), 0, func(Batch) error { return nil }), ErrInvalidArgument)
	require.ErrorIs(t, q.Pop(t.Context(), nil), ErrInvalidArgument)
	require.Zero(t, q.queuedUnits(), "nothing is queued by a failed call")
	require.False(t, q.HasSynced(), "a rejected write does not populate the queue")
}
