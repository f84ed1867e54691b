package informer

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer/deltafifo"
)

// TestKeyReusesTheCachedString: the queue's key for an object the cache
// holds is the cache's own string; for any other object it is a new one,
// equal to deltafifo.MetaNamespaceKey's.
func TestKeyReusesTheCachedString(t *testing.T) {
	s := New[*corev1.Pod](nil, Options{Name: "pods"})
	web := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	stored := "shop/" + web.Name
	require.NoError(t, s.idx.Add(stored, web))

	k, err := s.key(web.DeepCopy())
	require.NoError(t, err)
	require.Same(t, unsafe.StringData(stored), unsafe.StringData(k))
	// The point of the fast path: naming an object the cache holds
	// allocates nothing (the key is built on the stack).
	obj := web.DeepCopy()
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := s.key(obj); err != nil {
			panic(err)
		}
	})
	require.Zero(t, allocs, "allocations per key of an object the cache holds")

	db := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db"}}
	k, err = s.key(db)
	require.NoError(t, err)
	want, _ := deltafifo.MetaNamespaceKey(db)
	require.Equal(t, want, k)

	_, err = s.key(&corev1.Pod{})
	require.ErrorIs(t, err, deltafifo.ErrNoName)
}
