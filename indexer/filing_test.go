package indexer

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every index remembers where it filed each object (entry, in state.go),
// and takes the key out of there: these tests change stored objects in
// place, which callers must not do, and check that the indexes stay right.

// TestRemovalUsesFiledValues: removal takes the key out of the values it
// was filed under, even if the stored object was (wrongly) mutated since.
func TestRemovalUsesFiledValues(t *testing.T) {
	x := New(Indexers{"node": byNode})
	p := pod("a", "p", "", "n1")
	require.NoError(t, x.Add("a/p", p))
	p.Spec.NodeName = "n9" // what the docs forbid: mutating a stored object
	require.NoError(t, x.Update("a/p", pod("a", "p", "", "n2")))
	require.Equal(t, contents{"node": {"n2": {"a/p"}}}, indexContents(t, x, "node"))
}

// TestMutatedObjectsLeaveIndexesRight: the built-in indexes, like custom
// ones, take a key out of the values they filed it under, not out of what
// the stored object says now. A caller that (wrongly) changes a cached
// object's labels or namespace in place, and then lets the real update or
// delete through, finds the label and namespace queries right afterwards.
func TestMutatedObjectsLeaveIndexesRight(t *testing.T) {
	for _, early := range []bool{true, false} {
		t.Run(fmt.Sprintf("labels in use from the start=%v", early), func(t *testing.T) {
			x := New(nil)
			if early {
				require.NoError(t, x.UseLabelIndex())
			}
			web, gone := pod("a", "p", "app=web,tier=fe", ""), pod("a", "q", "app=web", "")
			require.NoError(t, x.Add("a/p", web))
			require.NoError(t, x.Add("a/q", gone))
			require.NoError(t, x.UseLabelIndex())

			// What the docs forbid: changing objects the cache holds.
			web.Labels["app"] = "db"
			delete(web.Labels, "tier")
			gone.Labels["app"] = "db"
			gone.Namespace = "b"

			// The watch then brings the real update and the real delete.
			require.NoError(t, x.Update("a/p", pod("a", "p", "app=db", "")))
			require.NoError(t, x.Delete("a/q"))

			require.Equal(t, contents{
				NamespaceIndex: {"a": {"a/p"}},
				LabelIndex:     {"app=db": {"a/p"}},
			}, indexContents(t, x, NamespaceIndex, LabelIndex))
			keys, err := x.IndexKeys(LabelIndex, "app=web")
			require.NoError(t, err)
			require.Empty(t, keys, "nothing is left filed under the old label")
		})
	}
}
