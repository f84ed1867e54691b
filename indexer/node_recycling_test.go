package indexer

import (
	"fmt"
	"hash/maphash"
	"testing"

	"github.com/stretchr/testify/require"
)

// The tests of node_recycling.go: delete them with it.

// TestTrieReusesUnlinkedNodes: a trie whose keys come and go, like a cache
// of short-lived pods, stops allocating once its editor has spare nodes:
// what deletes unlink, adds build from.
func TestTrieReusesUnlinkedNodes(t *testing.T) {
	seed := maphash.MakeSeed()
	keys := make([]string, 300)
	hashes := make([]uint64, len(keys))
	for i := range keys {
		keys[i] = fmt.Sprintf("ns-%d/pod-%d", i%10, i)
		hashes[i] = maphash.String(seed, keys[i])
	}
	ed := &editor[int]{gen: 1}
	var tr trie[int]
	cycle := func() {
		for i, k := range keys {
			tr = tr.set(ed, hashes[i], k, i)
		}
		for i, k := range keys {
			tr, _ = tr.del(ed, hashes[i], k)
		}
	}
	// A spare node may take a place that needs more room than it had:
	// its slices grow, and keep that capacity. The growth is bounded (70
	// or so nodes, 32 slots each), so the allocations die out.
	warm := 0
	for testing.AllocsPerRun(1, cycle) > 0 {
		warm++
		require.Less(t, warm, 50, "still allocating after %d cycles", warm)
	}
	require.NotEmpty(t, ed.spare, "the deletes kept what they unlinked")
	require.Zero(t, testing.AllocsPerRun(5, cycle), "allocations per add-all, delete-all cycle")
	require.Nil(t, tr.root)
	for _, n := range ed.spare {
		require.Empty(t, n.leaves, "a spare node holds no key or value")
		require.Empty(t, n.children)
		require.Zero(t, n.leafMap|n.childMap)
	}
}

// TestTrieKeepsNodesOfOlderGenerations: a node made before the version a
// reader may hold is never taken as a spare, however it is unlinked.
func TestTrieKeepsNodesOfOlderGenerations(t *testing.T) {
	seed := maphash.MakeSeed()
	hash := func(k string) uint64 { return maphash.String(seed, k) }
	one := &editor[int]{gen: 1}
	var old trie[int]
	for i := range 200 {
		k := fmt.Sprint(i)
		old = old.set(one, hash(k), k, i)
	}
	two := &editor[int]{gen: 2}
	cur := old
	for i := range 200 {
		k := fmt.Sprint(i)
		cur, _ = cur.del(two, hash(k), k)
	}
	require.Nil(t, cur.root)
	for _, n := range two.spare {
		require.Equal(t, uint64(2), n.gen, "only copies made by generation 2 are spares")
	}
	want := map[string]int{}
	for i := range 200 {
		want[fmt.Sprint(i)] = i
	}
	requireTrieEquals(t, old, want, hash, "the version generation 1 left")
}
