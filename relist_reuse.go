package informer

// Relists that keep the cached objects (internal/reuse says why it pays).
// Delete this file, the reuse and shared fields and their uses (New's
// Transform and Run's context), and the informer is still correct, only
// twice as large while a relist runs.

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer/internal/reuse"
)

// admitTransform is the queue's Transform: an object a relist found
// unchanged becomes the cached object again, as it is (it was transformed
// and shared when it was first cached); every other object goes through
// the user's Transform and then internal/share.
func (s *SharedInformer[T]) admitTransform(user func(runtime.Object) (runtime.Object, error)) func(runtime.Object) (runtime.Object, error) {
	shared := s.shared.Objects(user)
	return func(obj runtime.Object) (runtime.Object, error) {
		if cached, ok := s.reuse.Take(obj); ok {
			return cached, nil
		}
		return shared(obj)
	}
}

// newReuse hands the cache to the decoders. When the user's Transform is
// none or StripManagedFields, which leave maps and byte slices alone, the
// decoders may also share an object's repeated values as soon as it is
// decoded: a cold list or a relist then waits to be cached already small.
func (s *SharedInformer[T]) newReuse(user func(runtime.Object) (runtime.Object, error)) *reuse.Cache {
	c := reuse.New(s.idx.Get)
	if user == nil || reflect.ValueOf(user).Pointer() == reflect.ValueOf(StripManagedFields).Pointer() {
		c.Prepare = s.shared.Share
	}
	return c
}
