package informer

// Relists that keep the cached objects (internal/reuse says why it pays).
// Delete this file, the reuse field and its two uses (New's Transform and
// Run's context), and the informer is still correct, only twice as large
// while a relist runs.

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer/internal/reuse"
	"github.com/seed31a95821/informer/internal/share"
)

// admitTransform is the queue's Transform: an object a relist found
// unchanged becomes the cached object again, as it is (it was transformed
// and shared when it was first cached); every other object goes through
// the user's Transform and then internal/share.
func (s *SharedInformer[T]) admitTransform(user func(runtime.Object) (runtime.Object, error)) func(runtime.Object) (runtime.Object, error) {
	shared := new(share.Table).Objects(user)
	return func(obj runtime.Object) (runtime.Object, error) {
		if cached, ok := s.reuse.Take(obj); ok {
			return cached, nil
		}
		return shared(obj)
	}
}

func (s *SharedInformer[T]) newReuse() *reuse.Cache {
	return reuse.New(s.idx.Get)
}
