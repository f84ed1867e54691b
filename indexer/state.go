package indexer

import (
	"hash/maphash"
	"slices"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
)

// entry is what the object trie holds for one key: the object, and where
// every index filed it.
//
// Taking the key out of an index uses what the entry remembers, never the
// stored object, nor a fresh call of an index function on it: if someone
// mutated that object in place (which the package documentation forbids,
// but nothing prevents), or a custom function is not quite deterministic,
// what the object says now may not be where it was filed, and the key would
// stay filed under the old values forever. Remembering costs the built-in
// indexes little: the namespace is one string, inline, and the label values
// are kept only while the label index is in use.
type entry struct {
	obj runtime.Object
	// namespace is the value NamespaceIndex filed the object under.
	namespace string
	// filed is, for every other index, the values it filed the object under:
	// filed[i-1] for the index at position i of indexSet.list, so LabelIndex
	// first (nil while the label index is not in use), then the custom
	// indexes. It may be nil when all of them are empty. It is never
	// modified once stored, so versions may share it.
	filed [][]string
}

// filedAt returns the values of the index at position i (i >= 1).
func (e *entry) filedAt(i int) []string {
	if e == nil || e.filed == nil {
		return nil
	}
	return e.filed[i-1]
}

// withFiled returns e filed under vals in the index at position i (i >= 1)
// of a set of n indexes. e's own filed slice is left as it is: versions that
// share it go on seeing what they saw.
func (e entry) withFiled(i, n int, vals []string) entry {
	if e.filed == nil {
		e.filed = make([][]string, n-1)
	} else {
		e.filed = slices.Clone(e.filed)
	}
	e.filed[i-1] = vals
	return e
}

// bucket is the set of keys filed under one value of one index. Its leaves
// carry each key's hash, so looking the key up in the object trie does not
// hash it again.
type bucket = trie[struct{}]

// state is one complete version of what an Indexer holds: the objects, every
// index, the index definitions that built them and the resourceVersion they
// reflect. A reader that holds a state sees all of these agree with each
// other, whatever the writer does next.
//
// A state is either open or frozen:
//   - open: the writer edits it (and every trie node of its generation) in
//     place, except while reads that end before they return (readers > 0)
//     are looking at it;
//   - frozen: some reader may be looking at it for as long as it likes (it
//     froze it with Freeze), and it never changes again.
//
// The transition is one-way and happens under Indexer.mu (see
// Indexer.freeze). An open state belongs to the writer holding
// Indexer.writeMu and is not safe for concurrent use; a frozen state is safe
// for any number of readers.
type state struct {
	gen    uint64      // the writer generation that may edit this state while it is open
	frozen atomic.Bool // set under Indexer.mu the first time a reader takes this state; never cleared
	// readers counts the reads in progress on this state while it is open
	// (List, ByIndex and the like, which are over when they return; see
	// Indexer.borrow). The writer does not edit a state with readers in
	// place. Guarded by Indexer.mu.
	readers int
	// retired are nodes of this state's generation that the newer states
	// copied, for the writer to reuse once readers is back to zero
	// (node_retiring.go). Guarded by Indexer.mu.
	retired retiredNodes

	seed    maphash.Seed // hashes keys and index values; the same in every state of one Indexer
	defs    *indexSet
	labels  bool // LabelIndex is maintained in this state (see Indexer.UseLabelIndex)
	objects trie[entry]
	indexes []trie[bucket] // indexes[i] maps a value of defs.list[i] to its bucket
	rv      string
}

// newState returns an empty open state of generation gen.
func newState(gen uint64, seed maphash.Seed, defs *indexSet) *state {
	return &state{gen: gen, seed: seed, defs: defs, indexes: make([]trie[bucket], len(defs.list))}
}

// thaw returns an open copy of s for generation gen. The copy shares every
// trie node with s; because gen is new, the writer copies each node before
// editing it, so s stays exactly as its readers saw it.
func (s *state) thaw(gen uint64) *state {
	return &state{
		gen:     gen,
		seed:    s.seed,
		defs:    s.defs,
		labels:  s.labels,
		objects: s.objects,
		indexes: slices.Clone(s.indexes),
		rv:      s.rv,
	}
}

func (s *state) hash(str string) uint64 {
	return maphash.String(s.seed, str)
}

// lookup returns the entry stored under key.
func (s *state) lookup(key string) (entry, bool) {
	return s.objects.get(s.hash(key), key)
}

// leafOf returns a copy of the leaf that holds key: the key string s
// stores, and its entry.
func (s *state) leafOf(key string) (leaf[entry], bool) {
	if l, _ := s.objects.find(sharedGen, s.hash(key), key); l != nil {
		return *l, true
	}
	return leaf[entry]{}, false
}

// editors are the writer's editors for the three kinds of trie a state is
// made of, all at the generation of the state being edited. The Indexer
// keeps one set for the life of the writer, so that nodes one write unlinks
// serve the next (node_recycling.go).
type editors struct {
	objects editor[entry]
	indexes editor[bucket]
	buckets editor[struct{}]
	// retireFrom and retireInto: editing the state of generation
	// retireInto, note the nodes of generation retireFrom it copies
	// (node_retiring.go). sharedGen: none.
	retireFrom, retireInto uint64
}

// at points the editors at s, the open state about to be edited, and
// returns them.
func (ed *editors) at(s *state) *editors {
	ed.objects.gen, ed.indexes.gen, ed.buckets.gen = s.gen, s.gen, s.gen
	r := uint64(sharedGen)
	if s.gen == ed.retireInto {
		r = ed.retireFrom
	}
	ed.objects.retire.gen, ed.indexes.retire.gen, ed.buckets.retire.gen = r, r, r
	return ed
}

// apply carries out the index moves of one write of key (whose hash is kh).
// s must be open, and ed at s.
func (s *state) apply(ed *editors, moves []move, kh uint64, key string) {
	for _, m := range moves {
		idx := s.indexes[m.index]
		for _, v := range m.remove {
			idx = s.unfile(ed, idx, v, kh, key)
		}
		for _, v := range m.add {
			idx = s.file(ed, idx, v, kh, key)
		}
		s.indexes[m.index] = idx
	}
}

// file adds key to the bucket of value in idx.
func (s *state) file(ed *editors, idx trie[bucket], value string, kh uint64, key string) trie[bucket] {
	vh := s.hash(value)
	l, owned := idx.find(s.gen, vh, value)
	if l != nil && owned {
		// The bucket exists and every node down to it is ours: change it
		// where it is, without a second descent.
		l.val = l.val.set(&ed.buckets, kh, key, struct{}{})
		return idx
	}
	var b bucket
	if l != nil {
		b = l.val
	}
	b = b.set(&ed.buckets, kh, key, struct{}{})
	return idx.set(&ed.indexes, vh, value, b)
}

// unfile removes key from the bucket of value in idx, and removes the bucket
// itself when it becomes empty: an index of short-lived values (pod names,
// UIDs) would otherwise keep one empty bucket per value it ever saw.
func (s *state) unfile(ed *editors, idx trie[bucket], value string, kh uint64, key string) trie[bucket] {
	vh := s.hash(value)
	l, owned := idx.find(s.gen, vh, value)
	if l == nil {
		return idx
	}
	b, removed := l.val.del(&ed.buckets, kh, key)
	switch {
	case !removed:
		return idx
	case b.size == 0:
		idx, _ = idx.del(&ed.indexes, vh, value)
		return idx
	case owned:
		l.val = b // as in file: in place, no second descent
		return idx
	}
	return idx.set(&ed.indexes, vh, value, b)
}
