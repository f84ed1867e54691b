package indexer

import (
	"math/bits"
	"slices"
)

// This file holds the one data structure the indexer is built from: a
// persistent hash trie (a CHAMP-style hash array mapped trie) with string keys.
//
// "Persistent" means that an edit produces a new version and leaves the old
// one intact: the edit copies only the nodes on the path from the root to the
// changed leaf (about log32(n) of them) and shares everything else. That is
// what lets a reader keep walking an old version while the writer moves on.
//
// Copying a path on every edit would make writes slower than a plain Go map,
// so nodes also carry the generation of the writer that created them. While
// nobody keeps a version and nobody is reading it (it is "open" and has no
// readers), its writer edits the nodes of its own generation in place, like
// a map. Once a reader keeps it, or while one reads it, the writer starts a
// new generation, and every node it then touches is copied first. Clojure
// calls the same idea "transients".
//
// Deleting a key unlinks nodes (a node left empty, or holding a single leaf
// that folds into its parent), and adding one makes nodes (two keys that want
// one slot move down into a new node); node_recycling.go builds the new from
// the unlinked.
//
// The trie itself is not safe for concurrent use; the Indexer decides who may
// edit which generation (see state.go).

const (
	// bitsPerLevel hash bits pick a child at each level, so a node has at most
	// 32 slots and a trie of a million keys is about four levels deep.
	bitsPerLevel = 5
	levelMask    = 1<<bitsPerLevel - 1
	// collisionDepth is the depth at which all 64 hash bits have been used.
	// Keys whose hashes are fully equal end up together in one node there,
	// searched linearly. With a 64-bit seeded hash this almost never happens,
	// but correctness must not depend on luck.
	collisionDepth = (64 + bitsPerLevel - 1) / bitsPerLevel
)

// sharedGen tags nodes that no writer may ever edit in place. Writers use
// generations from 1 upwards, so a node built with sharedGen is always copied
// before it is changed.
const sharedGen = 0

// trie is one version of a map from string keys to values of type V. The zero
// value is an empty trie. It is a small value (a root pointer and a count),
// passed and stored by value.
type trie[V any] struct {
	root *node[V]
	size int
}

// node is one level of the trie. Occupied slots are stored compressed: bit i
// of leafMap (or childMap) says slot i holds a leaf (or a sub-trie), and its
// position in leaves (or children) is the number of lower bits set. Keeping
// leaves and children apart keeps inner nodes small (8 bytes per child), so
// copying a path stays cheap.
type node[V any] struct {
	gen      uint64 // the only writer generation allowed to edit this node in place
	leafMap  uint32
	childMap uint32
	leaves   []leaf[V]
	children []*node[V]
}

// leaf is one key and its value. The full hash is kept so that pushing a leaf
// one level down, or looking its key up in another trie that uses the same
// seed, never has to hash the key again.
type leaf[V any] struct {
	hash uint64
	key  string
	val  V
}

// editor is a writer's hold on tries of values of type V: the generation it
// edits in place. The zero value edits generation sharedGen, which owns no
// node: every edit copies. Not safe for concurrent use: it belongs to the
// writer.
type editor[V any] struct {
	gen   uint64
	spare spares[V] // nodes this writer unlinked, for reuse (node_recycling.go)
	// retire lists the nodes of generation retireGen that own copied, for
	// reuse once nobody reads that generation (node_retiring.go).
	retire retirement[V]
}

// newNode returns an empty node of the editor's generation.
func (ed *editor[V]) newNode() *node[V] {
	if n := ed.spare.take(); n != nil {
		n.gen = ed.gen
		return n
	}
	return &node[V]{gen: ed.gen}
}

// drop is told of every node the edit in progress unlinks: n is no longer
// part of the trie the editor is making, though it may still be part of an
// older version somebody reads.
func (ed *editor[V]) drop(n *node[V]) {
	ed.spare.keep(ed.gen, n)
}

// slotBit returns the bit of the slot that hash h occupies at depth.
func slotBit(h uint64, depth int) uint32 {
	return 1 << ((h >> (uint(depth) * bitsPerLevel)) & levelMask)
}

// position converts a slot bit into an index of the compressed slice.
func position(bitmap, bit uint32) int {
	return bits.OnesCount32(bitmap & (bit - 1))
}

// get returns the value stored under key, whose hash is h.
func (t trie[V]) get(h uint64, key string) (V, bool) {
	if l, _ := t.find(sharedGen, h, key); l != nil {
		return l.val, true
	}
	var zero V
	return zero, false
}

// find returns the leaf of key (nil if absent), and whether generation gen
// owns every node on the way to it. A writer that owns the path may change
// the leaf's value through the pointer, saving the second descent of set.
func (t trie[V]) find(gen, h uint64, key string) (*leaf[V], bool) {
	owned := true
	n := t.root
	for depth := 0; n != nil; depth++ {
		owned = owned && n.gen == gen
		if depth == collisionDepth {
			for i := range n.leaves {
				if n.leaves[i].key == key {
					return &n.leaves[i], owned
				}
			}
			break
		}
		bit := slotBit(h, depth)
		if n.leafMap&bit != 0 {
			l := &n.leaves[position(n.leafMap, bit)]
			if l.hash == h && l.key == key {
				return l, owned
			}
			break
		}
		if n.childMap&bit == 0 {
			break
		}
		n = n.children[position(n.childMap, bit)]
	}
	return nil, false
}

// set returns the trie with key bound to val. Nodes of ed's generation are
// edited in place; any other node on the path is copied first.
func (t trie[V]) set(ed *editor[V], h uint64, key string, val V) trie[V] {
	root := t.root
	if root == nil {
		root = ed.newNode()
	}
	root, added := root.set(ed, 0, h, key, val)
	t.root = root
	if added {
		t.size++
	}
	return t
}

// del returns the trie without key, and whether key was there.
func (t trie[V]) del(ed *editor[V], h uint64, key string) (trie[V], bool) {
	if t.root == nil {
		return t, false
	}
	root, removed := t.root.del(ed, 0, h, key)
	if !removed {
		return t, false
	}
	t.root = root
	t.size--
	return t, true
}

// each calls yield for every leaf until yield returns false. The order is the
// order of the hashes, which is stable for one trie but not meaningful.
func (t trie[V]) each(yield func(l *leaf[V]) bool) bool {
	if t.root == nil {
		return true
	}
	return t.root.each(yield)
}

// own returns n itself when ed's generation may edit it, else a copy owned by
// that generation. The copy has slices of its own, so editing it can never
// reach n.
func (n *node[V]) own(ed *editor[V]) *node[V] {
	if n.gen == ed.gen {
		return n
	}
	ed.retire.note(n)
	c := ed.newNode()
	c.leafMap, c.childMap = n.leafMap, n.childMap
	c.leaves = append(c.leaves, n.leaves...)
	c.children = append(c.children, n.children...)
	return c
}

// set binds key to val below n and returns the node that replaces n, and
// whether the key is new.
func (n *node[V]) set(ed *editor[V], depth int, h uint64, key string, val V) (*node[V], bool) {
	if depth == collisionDepth {
		return n.setCollision(ed, h, key, val)
	}
	bit := slotBit(h, depth)
	switch {
	case n.childMap&bit != 0:
		i := position(n.childMap, bit)
		child, added := n.children[i].set(ed, depth+1, h, key, val)
		e := n.own(ed)
		e.children[i] = child
		return e, added
	case n.leafMap&bit != 0:
		i := position(n.leafMap, bit)
		if l := &n.leaves[i]; l.hash == h && l.key == key {
			e := n.own(ed)
			e.leaves[i].val = val
			return e, false
		}
		// Two keys want the same slot: move both one level down.
		child := pair(ed, depth+1, n.leaves[i], leaf[V]{hash: h, key: key, val: val})
		e := n.own(ed)
		e.leaves = slices.Delete(e.leaves, i, i+1)
		e.leafMap &^= bit
		e.children = slices.Insert(e.children, position(e.childMap, bit), child)
		e.childMap |= bit
		return e, true
	default:
		e := n.own(ed)
		e.leaves = slices.Insert(e.leaves, position(e.leafMap, bit), leaf[V]{hash: h, key: key, val: val})
		e.leafMap |= bit
		return e, true
	}
}

// setCollision is set for a node at collisionDepth, whose leaves all share
// one hash and are told apart by key alone.
func (n *node[V]) setCollision(ed *editor[V], h uint64, key string, val V) (*node[V], bool) {
	for i := range n.leaves {
		if n.leaves[i].key == key {
			e := n.own(ed)
			e.leaves[i].val = val
			return e, false
		}
	}
	e := n.own(ed)
	e.leaves = append(e.leaves, leaf[V]{hash: h, key: key, val: val})
	return e, true
}

// pair builds the sub-trie at depth that holds two leaves which collided one
// level up. While their hashes agree at this depth it nests one more level.
func pair[V any](ed *editor[V], depth int, a, b leaf[V]) *node[V] {
	n := ed.newNode()
	if depth == collisionDepth {
		n.leaves = append(n.leaves, a, b)
		return n
	}
	ba, bb := slotBit(a.hash, depth), slotBit(b.hash, depth)
	if ba == bb {
		n.childMap = ba
		n.children = append(n.children, pair(ed, depth+1, a, b))
		return n
	}
	n.leafMap = ba | bb
	if ba < bb {
		n.leaves = append(n.leaves, a, b)
	} else {
		n.leaves = append(n.leaves, b, a)
	}
	return n
}

// del removes key below n. It returns the node that replaces n (nil when n
// became empty) and whether the key was found.
func (n *node[V]) del(ed *editor[V], depth int, h uint64, key string) (*node[V], bool) {
	if depth == collisionDepth {
		return n.delCollision(ed, key)
	}
	bit := slotBit(h, depth)
	switch {
	case n.leafMap&bit != 0:
		i := position(n.leafMap, bit)
		if l := &n.leaves[i]; l.hash != h || l.key != key {
			return n, false
		}
		if len(n.leaves) == 1 && len(n.children) == 0 {
			ed.drop(n)
			return nil, true
		}
		e := n.own(ed)
		e.leaves = slices.Delete(e.leaves, i, i+1)
		e.leafMap &^= bit
		return e, true
	case n.childMap&bit != 0:
		i := position(n.childMap, bit)
		child, removed := n.children[i].del(ed, depth+1, h, key)
		if !removed {
			return n, false
		}
		return n.replaceChild(ed, i, bit, child), true
	}
	return n, false
}

// replaceChild puts child (the result of a delete) into slot bit of n. An
// empty child is dropped; a child left with a single leaf is folded back into
// n. Folding keeps the trie canonical: the shape depends only on the keys, not
// on the history of edits, so deletes give memory back and paths stay short.
//
// Every node a delete unlinks is dropped (see editor.drop): an empty child by
// the del below, n itself when it is left empty, a child folded into n here.
func (n *node[V]) replaceChild(ed *editor[V], i int, bit uint32, child *node[V]) *node[V] {
	switch {
	case child == nil:
		if len(n.children) == 1 && len(n.leaves) == 0 {
			ed.drop(n)
			return nil
		}
		e := n.own(ed)
		e.children = slices.Delete(e.children, i, i+1)
		e.childMap &^= bit
		return e
	case len(child.leaves) == 1 && len(child.children) == 0:
		// The leaf moves into n at the slot its hash has at n's depth. If n
		// is then left with that leaf alone, n's parent folds n in turn.
		e := n.own(ed)
		e.children = slices.Delete(e.children, i, i+1)
		e.childMap &^= bit
		e.leaves = slices.Insert(e.leaves, position(e.leafMap, bit), child.leaves[0])
		e.leafMap |= bit
		ed.drop(child)
		return e
	default:
		e := n.own(ed)
		e.children[i] = child
		return e
	}
}

// delCollision is del for a node at collisionDepth.
func (n *node[V]) delCollision(ed *editor[V], key string) (*node[V], bool) {
	for i := range n.leaves {
		if n.leaves[i].key != key {
			continue
		}
		if len(n.leaves) == 1 {
			ed.drop(n)
			return nil, true
		}
		e := n.own(ed)
		e.leaves = slices.Delete(e.leaves, i, i+1)
		return e, true
	}
	return n, false
}

func (n *node[V]) each(yield func(l *leaf[V]) bool) bool {
	for i := range n.leaves {
		if !yield(&n.leaves[i]) {
			return false
		}
	}
	for _, c := range n.children {
		if !c.each(yield) {
			return false
		}
	}
	return true
}

// findFrom is find without the ownership check, for a key known to lie below
// n, which sits at depth.
func (n *node[V]) findFrom(depth int, h uint64, key string) *leaf[V] {
	for ; n != nil; depth++ {
		if depth == collisionDepth {
			for i := range n.leaves {
				if n.leaves[i].key == key {
					return &n.leaves[i]
				}
			}
			return nil
		}
		bit := slotBit(h, depth)
		if n.leafMap&bit != 0 {
			l := &n.leaves[position(n.leafMap, bit)]
			if l.hash == h && l.key == key {
				return l
			}
			return nil
		}
		if n.childMap&bit == 0 {
			return nil
		}
		n = n.children[position(n.childMap, bit)]
	}
	return nil
}

// join calls yield with every key of the set s and its leaf in t (nil if t
// lacks the key), until yield returns false. s and t are nodes at the same
// depth of two tries that hash keys the same way, so every key below slot i
// of s is below slot i of t too. Walking both side by side finds each key
// from the deepest node the tries share instead of from the root, and visits
// t in order, which is kinder to the CPU cache: this is how a bucket of an
// index is turned into objects.
func join[V any](s *node[struct{}], t *node[V], depth int, yield func(key string, l *leaf[V]) bool) bool {
	for i := range s.leaves {
		k := &s.leaves[i]
		if !yield(k.key, t.findFrom(depth, k.hash, k.key)) {
			return false
		}
	}
	if depth == collisionDepth {
		return true
	}
	rest := s.childMap
	for _, c := range s.children {
		bit := rest & -rest // children are stored in slot order
		rest &^= bit
		if t.childMap&bit == 0 {
			// t holds at most one key in this slot, so some keys of s are
			// not in t (never the case for a bucket and its state): look
			// each one up from here.
			ok := c.each(func(k *leaf[struct{}]) bool {
				return yield(k.key, t.findFrom(depth, k.hash, k.key))
			})
			if !ok {
				return false
			}
			continue
		}
		if !join(c, t.children[position(t.childMap, bit)], depth+1, yield) {
			return false
		}
	}
	return true
}
