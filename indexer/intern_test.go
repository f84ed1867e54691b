package indexer

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
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
		k, ok := x.InternKey([]byte("shop/web-1"))
		require.True(t, ok, "frozen=%v", frozen)
		require.Equal(t, stored, k)
		require.Same(t, unsafe.StringData(stored), unsafe.StringData(k), "the stored string itself, frozen=%v", frozen)
		_, ok = x.InternKey([]byte("shop/web-2"))
		require.False(t, ok, "frozen=%v", frozen)
	}
	b := []byte("shop/web-1")
	k, _ := x.InternKey(b)
	b[0] = 'X' // the caller may reuse its buffer
	require.Equal(t, "shop/web-1", k)
	_, ok := x.InternKey(nil)
	require.False(t, ok)
}

// TestInternKeyAllocatesNothing: the point of the fast path. A key built
// in a stack buffer, as the informer's key function builds it, is looked
// up without allocating: the buffer stays on the stack.
func TestInternKeyAllocatesNothing(t *testing.T) {
	x := New(nil)
	stored := "shop/web-1"
	require.NoError(t, x.Add(stored, pod("shop", "web-1", "", "")))
	allocs := testing.AllocsPerRun(100, func() {
		var buf [64]byte
		b := append(append(append(buf[:0], "shop"...), '/'), "web-1"...)
		if k, ok := x.InternKey(b); !ok || k != stored {
			panic("not found")
		}
	})
	require.Zero(t, allocs, "allocations per lookup")
}
