package indexer

import (
	"fmt"
	"hash/maphash"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// trieVersion is a frozen version of a trie and the map it must equal.
type trieVersion struct {
	t     trie[int]
	model map[string]int
}

// TestTrieMatchesMap checks the trie against a Go map under random sets and
// deletes, with hash functions chosen to force every code path: deep chains
// of shared hash prefixes, and full 64-bit collisions. Every few operations
// the current version is frozen (the generation changes) and kept; at the end
// each kept version must still equal the map it had, which proves that edits
// of a new generation never touch nodes of an old one, nor reuse them as
// spares.
func TestTrieMatchesMap(t *testing.T) {
	seed := maphash.MakeSeed()
	hashes := map[string]func(string) uint64{
		"seeded":      func(k string) uint64 { return maphash.String(seed, k) },
		"8 hashes":    func(k string) uint64 { return maphash.String(seed, k) % 8 },
		"high bits":   func(k string) uint64 { return maphash.String(seed, k) << 50 },
		"one hash":    func(string) uint64 { return 42 },
		"two buckets": func(k string) uint64 { return (maphash.String(seed, k) % 2) << 63 },
	}
	rng := rand.New(rand.NewPCG(uint64(testSeed(t)), 1))
	for name, hash := range hashes {
		t.Run(name, func(t *testing.T) {
			var (
				cur   trie[int]
				model = map[string]int{}
				kept  []trieVersion
				ed    = &editor[int]{gen: 1}
			)
			for step := range 3000 {
				key := fmt.Sprintf("k%d", rng.IntN(200))
				if rng.IntN(3) == 0 {
					var removed bool
					cur, removed = cur.del(ed, hash(key), key)
					_, had := model[key]
					require.Equal(t, had, removed, "step %d: del(%s)", step, key)
					delete(model, key)
				} else {
					cur = cur.set(ed, hash(key), key, step)
					model[key] = step
				}
				if rng.IntN(50) == 0 {
					kept = append(kept, trieVersion{t: cur, model: maps.Clone(model)})
					ed.gen++
				}
			}
			kept = append(kept, trieVersion{t: cur, model: model})
			for i, v := range kept {
				requireTrieEquals(t, v.t, v.model, hash, fmt.Sprintf("version %d", i))
			}
		})
	}
}

func requireTrieEquals(t *testing.T, tr trie[int], model map[string]int, hash func(string) uint64, what string) {
	t.Helper()
	require.Equal(t, len(model), tr.size, "%s: size", what)
	got := map[string]int{}
	tr.each(func(l *leaf[int]) bool {
		require.Equal(t, hash(l.key), l.hash, "%s: stored hash of %s", what, l.key)
		got[l.key] = l.val
		return true
	})
	require.Equal(t, model, got, "%s: contents", what)
	for k, v := range model {
		g, ok := tr.get(hash(k), k)
		require.True(t, ok, "%s: get(%s)", what, k)
		require.Equal(t, v, g, "%s: get(%s)", what, k)
	}
	_, ok := tr.get(hash("absent"), "absent")
	require.False(t, ok, "%s: get(absent)", what)
	if tr.root != nil {
		requireCanonical(t, tr.root, 0, true, what)
	}
}

// requireCanonical checks the shape invariants deletes must keep: bitmaps
// agree with the slices, no node below the root is empty or holds a single
// leaf and nothing else (it would have been folded into its parent).
func requireCanonical[V any](t *testing.T, n *node[V], depth int, root bool, what string) {
	t.Helper()
	if !root {
		require.False(t, len(n.leaves)+len(n.children) == 0, "%s: empty node at depth %d", what, depth)
		require.False(t, len(n.leaves) == 1 && len(n.children) == 0, "%s: lone leaf not folded at depth %d", what, depth)
	}
	if depth == collisionDepth {
		require.Empty(t, n.children, "%s: collision node with children", what)
		return
	}
	require.Equal(t, len(n.leaves), popcount(n.leafMap), "%s: leafMap at depth %d", what, depth)
	require.Equal(t, len(n.children), popcount(n.childMap), "%s: childMap at depth %d", what, depth)
	require.Zero(t, n.leafMap&n.childMap, "%s: slot both leaf and child at depth %d", what, depth)
	for _, c := range n.children {
		requireCanonical(t, c, depth+1, false, what)
	}
}

func popcount(x uint32) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

func TestTrieInPlaceOnlyForOwnGeneration(t *testing.T) {
	hash := func(k string) uint64 { return uint64(len(k)) }
	var a trie[int]
	one, two := &editor[int]{gen: 1}, &editor[int]{gen: 2}
	a = a.set(one, hash("x"), "x", 1)
	root := a.root
	a = a.set(one, hash("x"), "x", 2)
	require.Same(t, root, a.root, "the owning generation edits in place")

	b := a.set(two, hash("x"), "x", 3)
	require.NotSame(t, a.root, b.root, "another generation copies")
	v, _ := a.get(hash("x"), "x")
	require.Equal(t, 2, v, "the old version is untouched")

	c := b.set(one, hash("y"), "yy", 4) // generation 1 does not own b's root
	require.NotSame(t, b.root, c.root)
	_, ok := b.get(hash("yy"), "yy")
	require.False(t, ok)
}

func TestTrieDeleteEverythingFreesTheRoot(t *testing.T) {
	seed := maphash.MakeSeed()
	var tr trie[int]
	ed := &editor[int]{gen: 1}
	for i := range 1000 {
		k := fmt.Sprint(i)
		tr = tr.set(ed, maphash.String(seed, k), k, i)
	}
	for i := range 1000 {
		k := fmt.Sprint(i)
		var ok bool
		tr, ok = tr.del(ed, maphash.String(seed, k), k)
		require.True(t, ok)
	}
	require.Zero(t, tr.size)
	require.Nil(t, tr.root)
}

// TestJoin: walking a set alongside a map finds every key's leaf, absent
// keys included, under hash functions that force deep and colliding paths.
func TestJoin(t *testing.T) {
	seed := maphash.MakeSeed()
	rng := rand.New(rand.NewPCG(uint64(testSeed(t)), 5))
	for name, hash := range map[string]func(string) uint64{
		"seeded":    func(k string) uint64 { return maphash.String(seed, k) },
		"8 hashes":  func(k string) uint64 { return maphash.String(seed, k) % 8 },
		"high bits": func(k string) uint64 { return maphash.String(seed, k) << 50 },
		"one hash":  func(string) uint64 { return 7 },
	} {
		t.Run(name, func(t *testing.T) {
			for range 20 {
				var (
					m    trie[int]
					s    trie[struct{}]
					want = map[string]int{}
					med  = &editor[int]{gen: 1}
					sed  = &editor[struct{}]{gen: 1}
				)
				for i := range 300 {
					k := fmt.Sprint(i)
					if rng.IntN(2) == 0 {
						m = m.set(med, hash(k), k, i)
						if rng.IntN(3) > 0 {
							s = s.set(sed, hash(k), k, struct{}{})
							want[k] = i
						}
					} else if rng.IntN(10) == 0 {
						s = s.set(sed, hash(k), k, struct{}{}) // in the set only
						want[k] = -1
					}
				}
				if s.root == nil || m.root == nil {
					continue
				}
				got := map[string]int{}
				join(s.root, m.root, 0, func(k string, l *leaf[int]) bool {
					got[k] = -1
					if l != nil {
						got[k] = l.val
					}
					return true
				})
				require.Equal(t, want, got)
				n := 0
				join(s.root, m.root, 0, func(string, *leaf[int]) bool { n++; return n < 3 })
				require.Equal(t, min(3, len(want)), n, "stops when yield says so")
			}
		})
	}
}
