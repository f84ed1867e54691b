package informer

// Relists that keep the cached objects (internal/reuse says why it pays),
// and values shared as they are decoded (internal/share). Delete this
// file, the reuse, shared and decodersShare fields and their lines in
// newInformer, and the decoders argument of the Factory's listerWatcher,
// and the informer is still correct, only twice as large while a relist
// runs, and larger while a list waits to be cached. fastPaths.relist and
// decodeShare switch them off.

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer/reflector/wire"
)

// admitTransform is the queue's Transform: an object a relist found
// unchanged becomes the cached object again, as it is (it was transformed
// and shared when it was first cached); every other object goes through
// the user's Transform. When the decoders share objects as they decode
// them (decodersShare), nothing more is done here: this runs on every
// event, and the pipeline's CPU per event is a target. Otherwise, with a
// Transform that may modify maps, objects are shared after it.
func (s *SharedInformer[T]) admitTransform(user func(runtime.Object) (runtime.Object, error)) func(runtime.Object) (runtime.Object, error) {
	next := user
	if !s.decodersShare {
		next = s.shared.Objects(user)
	}
	if s.reuse == nil {
		return next
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

// decoders is what the informer asks of the decoders of a reflector/wire
// ListerWatcher, which a Factory builds for it (wire.Options.Relist and
// Decoded): nil fields ask for nothing.
type decoders struct {
	relist  wire.RelistCache
	decoded func(runtime.Object)
	// dropManagedFields: the Transform drops them (DropsManagedFields),
	// so the decoders need not decode them.
	dropManagedFields bool
	// shareParts: nothing modifies a decoded object (no Transform, or
	// StripManagedFields), so objects may share whole decoded parts.
	shareParts bool
	// parts, with shareParts, is the table decoded is sharing into: the
	// protobuf decoder takes a pod's parts from it by their bytes.
	parts wire.PodParts
}

// decoders returns the informer's cache as a relist sees it, and its
// sharing when the decoders are to share.
func (s *SharedInformer[T]) decoders() decoders {
	var d decoders
	if s.reuse != nil {
		d.relist = s.reuse // not a nil *reuse.Cache in a non-nil interface
	}
	if s.decodersShare {
		d.decoded = s.shared.Share // the decoders already dropped managedFields (DropManagedFields)
	}
	d.dropManagedFields = s.opts.Transform.DropsManagedFields
	tr := s.opts.Transform
	d.shareParts = s.decodersShare && (tr.Func == nil || tr.onlyManagedFields)
	if d.shareParts && s.shared != nil { // not a nil *share.Table in a non-nil interface
		d.parts = s.shared
	}
	return d
}
