package informer

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// Transform rewrites each object once, as it enters the queue and before
// it is cached (Options.Transform): a place to drop fields the program
// never reads. The zero value rewrites nothing.
type Transform struct {
	// Func is the rewrite. It must return an object of the same type. It
	// may modify the object in place: it runs once, on the object freshly
	// decoded from the wire, before anyone else can see it. An object a
	// relist finds unchanged (the UID and resourceVersion of the cached
	// one) is not given to it again: the cache keeps the object it has, so
	// Func must depend on the object alone. Nil rewrites nothing.
	Func func(runtime.Object) (runtime.Object, error)
	// LeavesMapsAlone declares that Func modifies no map and no byte slice
	// it finds in the object: it may set fields, clear them or point them
	// to new values, as StripManagedFields does, but not, say, delete a
	// key from the object's Labels. The informer then shares equal maps
	// and byte slices between objects as soon as they are decoded, before
	// Func runs, so that a list waiting to be cached is already small;
	// otherwise it shares them after Func, since a map shared before Func
	// modified it could be another object's too. The cache ends up as
	// small either way.
	LeavesMapsAlone bool
	// DropsManagedFields declares that Func removes
	// metadata.managedFields. A Factory's decoders then skip them as they
	// decode (reflector/wire's Options.DropManagedFields), rather than
	// decode what Func would drop: Func then receives objects without them.
	DropsManagedFields bool
}

// StripManagedFields returns a ready Transform that drops
// metadata.managedFields, the server-side-apply bookkeeping that makes up a
// fifth to two fifths of a typical pod's bytes and that almost no
// controller reads. Use it as Options.Transform (or
// FactoryOptions.Informer.Transform). It clears a field and modifies no
// map, so it declares LeavesMapsAlone, and DropsManagedFields.
func StripManagedFields() Transform {
	return Transform{Func: stripManagedFields, LeavesMapsAlone: true, DropsManagedFields: true}
}

func stripManagedFields(obj runtime.Object) (runtime.Object, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, fmt.Errorf("strip managedFields from %T: %w", obj, err)
	}
	m.SetManagedFields(nil)
	return obj, nil
}
