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
	// SetsFieldsOnly declares that Func only assigns fields of the object
	// and of the structs it holds by value (its metadata, spec and status):
	// it may set, clear or replace them, as StripManagedFields does, but it
	// writes nothing inside a map, a slice or what a pointer points to (not
	// a label, not a field of a container). The informer then shares equal
	// maps, slices and byte slices between objects as soon as they are
	// decoded, before Func runs, so that a list waiting to be cached is
	// already small; otherwise it shares them after Func, since a value
	// shared before Func wrote into it could be another object's too. The
	// cache ends up as small either way. A Func that breaks the promise
	// changes other cached objects than the one it is given.
	SetsFieldsOnly bool
	// DropsManagedFields declares that Func removes
	// metadata.managedFields. A Factory's decoders then skip them as they
	// decode (reflector/wire's Options.DropManagedFields), rather than
	// decode what Func would drop: Func then receives objects without them.
	DropsManagedFields bool
	// onlyManagedFields is set by StripManagedFields alone: Func changes
	// nothing but metadata.managedFields, so the decoders may let objects
	// share whole decoded parts (a pod's containers, volumes...) before
	// it runs. A Transform of the user's may set a field inside such a
	// part, which would then change every object that shares it.
	onlyManagedFields bool
}

// StripManagedFields returns a ready Transform that drops
// metadata.managedFields, the server-side-apply bookkeeping that makes up a
// fifth to two fifths of a typical pod's bytes and that almost no
// controller reads. Use it as Options.Transform (or
// FactoryOptions.Informer.Transform). It clears a field and modifies no
// map, so it declares SetsFieldsOnly, and DropsManagedFields.
func StripManagedFields() Transform {
	return Transform{Func: stripManagedFields, SetsFieldsOnly: true, DropsManagedFields: true, onlyManagedFields: true}
}

func stripManagedFields(obj runtime.Object) (runtime.Object, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, fmt.Errorf("strip managedFields from %T: %w", obj, err)
	}
	m.SetManagedFields(nil)
	return obj, nil
}
