package indexer

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// A batch writes as the methods it stands for do, and its writes are seen
// by a reader inside the batch as soon as they are made.
func TestBatchWritesLikeTheIndexer(t *testing.T) {
	x := New(Indexers{"node": byNode})
	require.NoError(t, x.Add("ns/a", pod("ns", "a", "app=web", "n1")))
	x.Batch(func(b Batch) {
		old, existed, err := b.Swap("ns/a", pod("ns", "a", "app=db", "n2"))
		require.NoError(t, err)
		require.True(t, existed)
		require.Equal(t, "web", old.(interface{ GetLabels() map[string]string }).GetLabels()["app"])
		_, existed, err = b.Swap("ns/b", pod("ns", "b", "", "n2"))
		require.NoError(t, err)
		require.False(t, existed)
		require.NoError(t, b.Delete("ns/a"))
		require.NoError(t, b.Delete("ns/missing"), "deleting what is not there does nothing")
		_, ok := x.Get("ns/a")
		require.False(t, ok, "a reader sees each write at once")

		_, _, err = b.Swap("", pod("ns", "c", "", ""))
		require.Error(t, err, "an empty key is refused")
		_, _, err = b.Swap("ns/d", pod("ns", "d", "", "!"))
		require.True(t, errors.Is(err, errBadNode), "%v", err)
	})
	require.Equal(t, []string{"ns/b"}, sortedKeys(x))
	keys, err := x.IndexKeys("node", "n2")
	require.NoError(t, err)
	require.Equal(t, []string{"ns/b"}, keys)
}
