package indexer

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/seed31a95821/informer/internal/cachekey"
)

// The tests of intern.go: delete them with it.

// TestIntern: the Indexer hands back its own string for a key it holds,
// whether its newest state is open or frozen, and nothing for other keys.
func TestIntern(t *testing.T) {
	x := New(nil)
	p := pod("shop", "web-1", "", "")
	stored := keyOf(p)
	require.NoError(t, x.Add(stored, p))
	for _, frozen := range []bool{false, true} {
		if frozen {
			x.Freeze()
		}
		k, ok := x.intern([]byte("shop/web-1"))
		require.True(t, ok, "frozen=%v", frozen)
		require.Equal(t, stored, k)
		require.Same(t, unsafe.StringData(stored), unsafe.StringData(k), "the stored string itself, frozen=%v", frozen)
		_, ok = x.intern([]byte("shop/web-2"))
		require.False(t, ok, "frozen=%v", frozen)
	}
	b := []byte("shop/web-1")
	k, _ := x.intern(b)
	b[0] = 'X' // the caller may reuse its buffer
	require.Equal(t, "shop/web-1", k)
	_, ok := x.intern(nil)
	require.False(t, ok)
}

// TestCachekeyLookup: internal/cachekey reaches intern through the link
// this package sets up, and finds nothing in what is not an Indexer.
func TestCachekeyLookup(t *testing.T) {
	x := New(nil)
	stored := "shop/web-1"
	require.NoError(t, x.Add(stored, pod("shop", "web-1", "", "")))
	k, ok := cachekey.Lookup(x, []byte("shop/web-1"))
	require.True(t, ok)
	require.Same(t, unsafe.StringData(stored), unsafe.StringData(k))
	_, ok = cachekey.Lookup(x, []byte("shop/web-2"))
	require.False(t, ok)
	_, ok = cachekey.Lookup("not an indexer", []byte("shop/web-1"))
	require.False(t, ok)
	long := make([]byte, cachekey.MaxKey+1)
	_, ok = cachekey.Lookup(x, long)
	require.False(t, ok, "a key longer than MaxKey is not looked up")

	// The point of the fast path: a key built in a stack buffer, as the
	// informer's key function builds it, is looked up without allocating.
	allocs := testing.AllocsPerRun(100, func() {
		var buf [64]byte
		b := append(append(append(buf[:0], "shop"...), '/'), "web-1"...)
		if _, ok := cachekey.Lookup(x, b); !ok {
			panic("not found")
		}
	})
	require.Zero(t, allocs, "allocations per lookup")

	// KeyOf, the informer's key function, builds the key so itself.
	obj := pod("shop", "web-1", "", "")
	k, err := cachekey.KeyOf(x, obj)
	require.NoError(t, err)
	require.Same(t, unsafe.StringData(stored), unsafe.StringData(k))
	allocs = testing.AllocsPerRun(100, func() {
		if _, err := cachekey.KeyOf(x, obj); err != nil {
			panic(err)
		}
	})
	require.Zero(t, allocs, "allocations per KeyOf of a key the cache holds")
}
