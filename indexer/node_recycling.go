package indexer

// Delete this file and its one hook (the spare field of editor, in trie.go,
// with the two lines of newNode and drop that use it), and the informer is
// still correct, only slower: every node a delete unlinks is left to the
// garbage collector, and every node an add needs is allocated. Its test,
// node_recycling_test.go, goes with it.
//
// Why recycle: a cache whose objects come and go (pods of short-lived jobs)
// unlinks trie nodes on every delete and makes new ones on every add, so
// without reuse it makes garbage at the rate of its churn. With reuse such a
// cache allocates almost nothing once warm (TestTrieReusesUnlinkedNodes).
//
// Why it is safe: reuse is safe for exactly the nodes in-place editing is
// safe for. A node of the editor's own generation is edited only while no
// reader is reading or keeping its version (state.go), so once the edit in
// progress unlinks it, nothing can reach it any more. A node of an older
// generation may still be part of a version somebody reads: it is never
// kept (TestTrieKeepsNodesOfOlderGenerations).

// spares are the nodes a writer unlinked and may build new ones from. The
// zero value is empty and ready to use.
type spares[V any] []*node[V]

// maxSpare bounds how many unlinked nodes an editor keeps. After a mass
// delete the spares are what a regrowing trie will need, but they should not
// pin much memory if it never regrows: a node holds at most 32 leaves.
const maxSpare = 512

// take returns a spare node, empty, or nil if there is none.
func (s *spares[V]) take() *node[V] {
	k := len(*s)
	if k == 0 {
		return nil
	}
	n := (*s)[k-1]
	(*s)[k-1] = nil
	*s = (*s)[:k-1]
	return n
}

// keep takes back n, which an edit of generation gen has just unlinked, if n
// is of that generation (see the top of this file). Its slices keep their
// capacity; what they held is cleared, so that a spare node keeps no key or
// value alive.
func (s *spares[V]) keep(gen uint64, n *node[V]) {
	if n.gen != gen || len(*s) == maxSpare {
		return
	}
	clear(n.leaves)
	clear(n.children)
	n.leaves, n.children = n.leaves[:0], n.children[:0]
	n.leafMap, n.childMap = 0, 0
	*s = append(*s, n)
}
