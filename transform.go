package informer

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// StripManagedFields is a ready Transform that drops metadata.managedFields,
// the server-side-apply bookkeeping that makes up a fifth to two fifths of a
// typical pod's bytes and that almost no controller reads. Use it as
// Options.Transform (or FactoryOptions.Informer.Transform).
//
// It modifies the object in place. That is safe because a transform runs
// once, on the object freshly decoded from the wire, before anyone else can
// see it.
func StripManagedFields(obj runtime.Object) (runtime.Object, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, fmt.Errorf("strip managedFields from %T: %w", obj, err)
	}
	m.SetManagedFields(nil)
	return obj, nil
}

// stripsManagedFields reports whether transform is StripManagedFields, which
// the wire decoders then do as they decode (wire.Options.DropManagedFields).
func stripsManagedFields(transform func(runtime.Object) (runtime.Object, error)) bool {
	return transform != nil && reflect.ValueOf(transform).Pointer() == reflect.ValueOf(StripManagedFields).Pointer()
}
