package informer

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer/deltafifo"
)

// TestWrongTypeInRelistLeavesTheCachedObject: a relisted object of the
// wrong type is reported and not cached, and the version the cache holds
// stays, whether the relist is applied key by key or atomically. Handlers
// hear nothing of it, so dropping the cached object would leave them
// believing in an object the cache no longer has, and a later server delete
// would never reach them.
func TestWrongTypeInRelistLeavesTheCachedObject(t *testing.T) {
	for _, atomic := range []bool{false, true} {
		t.Run(map[bool]string{false: "per-key", true: "atomic"}[atomic], func(t *testing.T) {
			var errs []error
			s := New[*corev1.Pod](nil, Options{Name: "pods", OnError: func(err error) { errs = append(errs, err) }})
			web := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", ResourceVersion: "1"}}
			require.NoError(t, s.idx.Add("shop/web", web))
			wrong := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", ResourceVersion: "2"}}
			item := deltafifo.Item{Key: "shop/web", Deltas: deltafifo.Deltas{{Type: deltafifo.Replaced, Object: wrong}}}

			require.NoError(t, s.apply(deltafifo.Batch{Items: []deltafifo.Item{item}, Relist: atomic, ResourceVersion: "2"}))
			cached, ok := s.idx.Get("shop/web")
			require.True(t, ok, "the cached pod was dropped without a Delete")
			require.Same(t, web, cached)
			require.Len(t, errs, 1)
			require.ErrorIs(t, errs[0], ErrWrongType)
		})
	}
}
