package reuse

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"
)

func pod(name, uid, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: k8stypes.UID("u-" + uid), ResourceVersion: rv}}
}

func TestUnchangedOnlyForTheSameUIDAndResourceVersion(t *testing.T) {
	cached := map[string]runtime.Object{"ns/a": pod("a", "1", "10"), "ns/b": pod("b", "2", "20")}
	c := New(func(k string) (runtime.Object, bool) { o, ok := cached[k]; return o, ok }, nil)
	c.Begin()

	same := pod("a", "1", "10")
	assert.Same(t, cached["ns/a"], c.Unchanged(same))
	assert.Nil(t, c.Unchanged(pod("b", "2", "21")), "a newer version")
	assert.Nil(t, c.Unchanged(pod("b", "9", "20")), "another object under the same name")
	assert.Nil(t, c.Unchanged(pod("c", "3", "30")), "not cached")
	assert.Nil(t, c.Unchanged(pod("a", "1", "")), "no resourceVersion")

	got, ok := c.Take(same)
	require.True(t, ok)
	assert.Same(t, cached["ns/a"], got)
	_, ok = c.Take(same)
	assert.False(t, ok, "taken once")
	_, ok = c.Take(pod("b", "2", "21"))
	assert.False(t, ok, "never handed out")
}

// A hostile server sends one UID under two names: the object handed out for
// ns/a must not be taken back for ns/b, or the cache would file a's state
// under b's key.
func TestTakeOnlyForTheSameKey(t *testing.T) {
	cached := map[string]runtime.Object{"ns/a": pod("a", "1", "10")}
	c := New(func(k string) (runtime.Object, bool) { o, ok := cached[k]; return o, ok }, nil)
	c.Begin()
	require.Same(t, cached["ns/a"], c.Unchanged(pod("a", "1", "10")))

	impostor := pod("b", "1", "10") // a's UID and resourceVersion, b's name
	require.Nil(t, c.Unchanged(impostor), "b is not cached")
	_, ok := c.Take(impostor)
	assert.False(t, ok, "a's cached object taken back for b")
	got, ok := c.Take(pod("a", "1", "10"))
	require.True(t, ok, "a itself is still handed back")
	assert.Same(t, cached["ns/a"], got)
}

func TestBeginForgetsWhatAnAbandonedRelistHandedOut(t *testing.T) {
	a := pod("a", "1", "10")
	c := New(func(string) (runtime.Object, bool) { return a, true }, nil)
	require.NotNil(t, c.Unchanged(pod("a", "1", "10")))
	c.Begin()
	_, ok := c.Take(pod("a", "1", "10"))
	assert.False(t, ok)
}

// An empty cache holds nothing unchanged: Begin says so, and a WatchList's
// decoder then looks none of its objects up. A cache whose size is not
// known may hold anything.
func TestBeginReportsAnEmptyCache(t *testing.T) {
	n := 0
	get := func(string) (runtime.Object, bool) { return nil, false }
	c := New(get, func() int { return n })
	assert.False(t, c.Begin(), "empty")
	n = 1
	assert.True(t, c.Begin(), "holds one object")
	assert.True(t, New(get, nil).Begin(), "size unknown")
}
