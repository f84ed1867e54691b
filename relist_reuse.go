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
// the user's Transform. When the decoders share objects as they decode
// them (newReuse), nothing more is done here: this runs on every event,
// and the pipeline's CPU per event is a target. Otherwise, with a
// Transform that may modify maps, objects are shared after it.
func (s *SharedInformer[T]) admitTransform(user func(runtime.Object) (runtime.Object, error)) func(runtime.Object) (runtime.Object, error) {
	next := user
	if s.reuse.Prepare == nil {
		next = s.shared.Objects(user)
	}
	return func(obj runtime.Object) (runtime.Object, error) {
		if cached, ok := s.reuse.Take(obj); ok {
			return cached, nil
		}
		if next == nil {
			return obj, nil
		}
		return next(obj)
	}
}

// newReuse hands the cache to the decoders. When the user's Transform is
// none or StripManagedFields, which leave maps and byte slices alone, the
// decoders also share each object's repeated values as soon as it is
// decoded, list items and watch events alike: a cold list or a relist then
// waits to be cached already small. Objects from a ListerWatcher other
// than reflector/wire's are then cached as they come.
func (s *SharedInformer[T]) newReuse(user func(runtime.Object) (runtime.Object, error)) *reuse.Cache {
	c := reuse.New(s.idx.Get)
	switch {
	case user == nil:
		c.Prepare = s.shared.Share
	case reflect.ValueOf(user).Pointer() == reflect.ValueOf(StripManagedFields).Pointer():
		// Strip first: the table would otherwise keep, until its budget
		// ages them out, every object's managedFields documents, which the
		// Transform drops next (0.37 became 0.44 of client-go's heap).
		c.Prepare = func(obj runtime.Object) {
			_, _ = StripManagedFields(obj)
			s.shared.Share(obj)
		}
	}
	return c
}
