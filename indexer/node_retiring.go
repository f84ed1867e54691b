package indexer

// Delete this file and its hooks (the retire field of editor and its one
// call in own, in trie.go; the retiring field of Indexer with the calls of
// settleRetired, startRetiring and releaseRetired in indexer.go; the
// retired field of state; and the retiring line of editors.at), and the
// informer is still correct, only slower: every node a write copies
// because a read was in progress is left to the garbage collector. Its
// test, node_retiring_test.go, goes with it.
//
// Why: a read that is over before it returns (a lister's List) counts
// itself among the readers of the newest state, and a write that comes
// meanwhile thaws a new generation (beginEdit). From then on the writer
// copies every node it touches once before it edits it, and the node it
// copied is garbage as soon as that read is over. With a writer busy over
// the whole cache and a List every few milliseconds, that is most of the
// cache's nodes, once per read: at 10,000 pods and 200 Lists a second,
// some 150 MB of garbage a second, a garbage collection every 150 ms, and
// readers waiting behind its mark work
// (BenchmarkIndexerWritesWithPacedReaders in bench/, read-p99-us).
//
// Why it is safe: a node of generation G is part of the state of
// generation G and of no other, until a later state copies it. When the
// writer thaws state G+1 from state G because a read is in progress on G
// (not because G was frozen: a frozen state may be kept forever), a node of
// generation G that state G+1 copies is no longer part of G+1, nor of any
// state made from G+1 later: only G's readers can reach it. Once G's
// readers count is back to zero it is unreachable (G is no longer the newest
// state, so no new read can start on it), and the writer builds new nodes
// from it, as it does from the nodes its deletes unlink. Any other way a
// state is made (Replace, AddIndexers, UseLabelIndex) turns retiring off:
// there, a node of the old generation may still be part of a state
// somebody reads.

// maxRetired bounds how many retired nodes an editor keeps for reuse (and
// so how many spares it may hold in all). Between two reads the writer of
// a busy 10,000-object cache copies about a thousand nodes per trie; the
// bound covers that, and the nodes were all part of the cache a moment
// before, so keeping them costs no more than the reader that held them.
const maxRetired = 4096

// retirement is an editor's list of the nodes of generation gen it copied.
// The zero value retires nothing.
type retirement[V any] struct {
	gen   uint64 // sharedGen: off
	nodes []*node[V]
}

// note records that the editor is copying n.
func (r *retirement[V]) note(n *node[V]) {
	if r.gen != sharedGen && n.gen == r.gen && len(r.nodes) < maxRetired {
		r.nodes = append(r.nodes, n)
	}
}

// take returns the nodes noted so far and forgets them.
func (r *retirement[V]) take() []*node[V] {
	out := r.nodes
	r.nodes = nil
	return out
}

// reuse takes back nodes that nobody can reach any more, whatever their
// generation (see the top of this file), cleared as keep clears them.
func (s *spares[V]) reuse(nodes []*node[V]) {
	for _, n := range nodes {
		if len(*s) >= maxRetired {
			return
		}
		clear(n.leaves)
		clear(n.children)
		n.leaves, n.children = n.leaves[:0], n.children[:0]
		n.leafMap, n.childMap = 0, 0
		*s = append(*s, n)
	}
}

// retiredNodes are nodes of one generation, one list per kind of trie.
type retiredNodes struct {
	objects []*node[entry]
	indexes []*node[bucket]
	buckets []*node[struct{}]
}

func (r *retiredNodes) empty() bool {
	return len(r.objects) == 0 && len(r.indexes) == 0 && len(r.buckets) == 0
}

// retiring is the writer's part: the state whose nodes its editors note
// (editors.retireFrom). from is guarded by Indexer.writeMu; its readers
// count is read under Indexer.mu.
type retiring struct {
	from *state // the state thawed from while read; nil: none
	// released are nodes whose state's last read has ended (giveBack),
	// for the writer to reuse. Guarded by Indexer.mu.
	released retiredNodes
}

// takeNoted removes what the editors noted.
func (ed *editors) takeNoted() retiredNodes {
	return retiredNodes{ed.objects.retire.take(), ed.indexes.retire.take(), ed.buckets.retire.take()}
}

// reuse gives nodes to the editors' spares.
func (ed *editors) reuse(r retiredNodes) {
	ed.objects.spare.reuse(r.objects)
	ed.indexes.spare.reuse(r.indexes)
	ed.buckets.spare.reuse(r.buckets)
}

// settleRetired, with writeMu and mu held, reuses the nodes that reads have
// released, and what the editors noted if nobody reads their state any
// more.
func (x *Indexer) settleRetired() {
	if !x.retiring.released.empty() {
		x.eds.reuse(x.retiring.released)
		x.retiring.released = retiredNodes{}
	}
	if f := x.retiring.from; f != nil && f.readers == 0 {
		x.eds.reuse(x.eds.takeNoted())
	}
}

// startRetiring, with writeMu and mu held, is told that the writer thaws
// next from old: the nodes noted so far go to their state, to be released
// by its last read, and from now on the editors note old's nodes if old is
// only read (not frozen).
func (x *Indexer) startRetiring(old, next *state) {
	if f := x.retiring.from; f != nil {
		noted := x.eds.takeNoted()
		if f.readers == 0 {
			x.eds.reuse(noted)
		} else {
			f.retired = noted
		}
	}
	x.retiring.from = nil
	x.eds.retireFrom, x.eds.retireInto = sharedGen, sharedGen
	if !old.frozen.Load() {
		x.retiring.from = old
		x.eds.retireFrom, x.eds.retireInto = old.gen, next.gen
	}
}

// releaseRetired, with mu held, is told that s's last read has ended: the
// nodes retired from s go to the writer.
func (x *Indexer) releaseRetired(s *state) {
	if s.retired.empty() {
		return
	}
	r := &x.retiring.released
	r.objects = appendBounded(r.objects, s.retired.objects)
	r.indexes = appendBounded(r.indexes, s.retired.indexes)
	r.buckets = appendBounded(r.buckets, s.retired.buckets)
	s.retired = retiredNodes{}
}

// appendBounded appends to to at most maxRetired nodes in all: the spares
// take no more.
func appendBounded[V any](to, nodes []*node[V]) []*node[V] {
	return append(to, nodes[:min(len(nodes), max(maxRetired-len(to), 0))]...)
}
