package indexer

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/stretchr/testify/require"
)

// The tests of node_retiring.go: delete them with it.

// retiringFixture is an Indexer of n pods and their keys.
func retiringFixture(t *testing.T, n int) (*Indexer, []string) {
	x := New(nil)
	keys := make([]string, n)
	for i := range keys {
		p := pod("ns", fmt.Sprintf("p-%d", i), "", "n1")
		keys[i] = keyOf(p)
		require.NoError(t, x.Add(keys[i], p))
	}
	return x, keys
}

// writeAll updates every key to a pod labelled with round.
func writeAll(t *testing.T, x *Indexer, keys []string, round int) {
	for i, k := range keys {
		p := pod("ns", fmt.Sprintf("p-%d", i), fmt.Sprintf("round=%d", round), "n1")
		require.NoError(t, x.Update(k, p))
	}
}

// rounds returns the round label of every object of s, by key.
func rounds(s Snapshot) map[string]string {
	out := map[string]string{}
	for key, obj := range s.All() {
		out[key] = obj.(*corev1.Pod).Labels["round"]
	}
	return out
}

// TestRetiredNodesWaitForTheirReaders: reads nest and overlap writes, so
// that the writer thaws one generation after another while an older one
// is still read. Each read sees its version unchanged to its end, even as
// the writer reuses the nodes that the end of other reads released.
func TestRetiredNodesWaitForTheirReaders(t *testing.T) {
	x, keys := retiringFixture(t, 2000)
	writeAll(t, x, keys, 1)
	for range 3 {
		x.Read(func(outer Snapshot) {
			want := rounds(outer)
			writeAll(t, x, keys, 2) // thaws: outer's nodes are copied
			x.Read(func(inner Snapshot) {
				writeAll(t, x, keys, 3) // thaws again: the copies of round 2 are copied
				require.Equal(t, want, rounds(outer), "the outer read's version changed")
				for _, r := range rounds(inner) {
					require.Equal(t, "2", r)
				}
			})
			// The inner read is over: its nodes may be reused, not outer's.
			writeAll(t, x, keys, 4)
			writeAll(t, x, keys, 5)
			require.Equal(t, want, rounds(outer), "the outer read's version changed")
		})
		writeAll(t, x, keys, 1) // reuses what the outer read released
		x.Read(func(s Snapshot) {
			for _, r := range rounds(s) {
				require.Equal(t, "1", r)
			}
		})
	}
	require.Equal(t, len(keys), x.Len())
}

// TestWriterReusesWhatReadsHeld: a writer that updates every key after a
// read copies the nodes that read held; once the read is over, it builds
// its copies from them. Without retiring, every copy allocates a node and
// its one or two slices (about 2.2 allocations per node); with it, the node
// is reused and a slice is allocated only where the spare's is too small
// (about 1.1).
func TestWriterReusesWhatReadsHeld(t *testing.T) {
	x, keys := retiringFixture(t, 2000)
	objs := make([]runtime.Object, len(keys))
	for i, k := range keys {
		obj, _ := x.Get(k)
		objs[i] = obj
	}
	round := func() {
		x.Read(func(Snapshot) { _ = x.Update(keys[0], objs[0]) }) // a write during a read thaws
		for i, k := range keys {
			_ = x.Update(k, objs[i])
		}
	}
	for range 5 {
		round()
	}
	nodes := 0
	x.Read(func(s Snapshot) {
		s.st.objects.root.walkNodes(func() { nodes++ })
	})
	allocs := testing.AllocsPerRun(10, round)
	require.Less(t, allocs, 1.5*float64(nodes), "allocations per round of %d writes over %d nodes", len(keys), nodes)
}

// walkNodes calls f once per node below and including n.
func (n *node[V]) walkNodes(f func()) {
	f()
	for _, c := range n.children {
		c.walkNodes(f)
	}
}
