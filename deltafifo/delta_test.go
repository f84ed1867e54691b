package deltafifo

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAppendDelta(t *testing.T) {
	a, b := pod("a", "1"), pod("a", "2")
	cases := []struct {
		name     string
		history  Deltas
		next     Delta
		compact  bool
		want     Deltas
		absorbed bool
	}{
		{"first delta", nil, add(a), true, Deltas{add(a)}, false},
		{"add then update grows", Deltas{add(a)}, upd(b), true, Deltas{add(a), upd(b)}, false},
		{"update then update compacts to the newer", Deltas{upd(a)}, upd(b), true, Deltas{upd(b)}, true},
		{"update then update kept without compaction", Deltas{upd(a)}, upd(b), false, Deltas{upd(a), upd(b)}, false},
		{"replaced then update compacts", Deltas{repl(a)}, upd(b), true, Deltas{upd(b)}, true},
		{"update then replaced compacts", Deltas{upd(a)}, repl(b), true, Deltas{repl(b)}, true},
		{"replaced then replaced compacts", Deltas{repl(a)}, repl(b), true, Deltas{repl(b)}, true},
		{"sync then update compacts", Deltas{syn(a)}, upd(b), true, Deltas{upd(b)}, true},
		{"replaced then replaced kept without compaction", Deltas{repl(a)}, repl(b), false, Deltas{repl(a), repl(b)}, false},
		{"added then update is kept: births are never merged", Deltas{add(a)}, upd(b), true, Deltas{add(a), upd(b)}, false},
		{"added then replaced is kept", Deltas{add(a)}, repl(b), true, Deltas{add(a), repl(b)}, false},
		{"update then sync is not compacted", Deltas{upd(a)}, syn(b), true, Deltas{upd(a), syn(b)}, false},
		{"update then delete is kept: deaths are never merged", Deltas{upd(a)}, del(b), true, Deltas{upd(a), del(b)}, false},
		{"real delete then real delete keeps the older", Deltas{del(a)}, del(b), true, Deltas{del(a)}, true},
		{"real delete then tombstone keeps the real one", Deltas{del(a)}, tomb(b), true, Deltas{del(a)}, true},
		{"tombstone then real delete keeps the real one", Deltas{tomb(a)}, del(b), true, Deltas{del(b)}, true},
		{"tombstone then tombstone keeps the newer", Deltas{tomb(a)}, tomb(b), true, Deltas{tomb(b)}, true},
		{"delete then add grows", Deltas{del(a)}, add(b), true, Deltas{del(a), add(b)}, false},
		{"delete then replaced grows", Deltas{del(a)}, repl(b), true, Deltas{del(a), repl(b)}, false},
		{"only the last two are compared", Deltas{upd(a), add(a)}, upd(b), true, Deltas{upd(a), add(a), upd(b)}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, absorbed := appendDelta(append(Deltas(nil), tc.history...), tc.next, !tc.compact)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.absorbed, absorbed)
		})
	}
}

func TestDeltasOldestNewest(t *testing.T) {
	a, b := pod("a", "1"), pod("a", "2")
	assert.Equal(t, Delta{}, Deltas(nil).Oldest())
	assert.Equal(t, Delta{}, Deltas(nil).Newest())
	ds := Deltas{add(a), upd(b)}
	assert.Equal(t, add(a), ds.Oldest())
	assert.Equal(t, upd(b), ds.Newest())
}

func TestMetaNamespaceKey(t *testing.T) {
	k, err := MetaNamespaceKey(pod("web", "1"))
	assert.NoError(t, err)
	assert.Equal(t, "ns/web", k)

	node := pod("n1", "1")
	node.Namespace = ""
	k, err = MetaNamespaceKey(node)
	assert.NoError(t, err)
	assert.Equal(t, "n1", k)

	_, err = MetaNamespaceKey(pod("", "1"))
	assert.ErrorIs(t, err, ErrNoName)
	_, err = MetaNamespaceKey(nil)
	assert.ErrorIs(t, err, ErrNilObject)
}

// TestMetaNamespaceKeyOfLongNames: no length limit. (The append form the
// informer uses is tested with the builder, in internal/objkey.)
func TestMetaNamespaceKeyOfLongNames(t *testing.T) {
	long := pod(strings.Repeat("n", 200), "1")
	k, err := MetaNamespaceKey(long)
	assert.NoError(t, err)
	assert.Equal(t, "ns/"+long.Name, k)
}
