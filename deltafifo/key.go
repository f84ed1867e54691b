package deltafifo

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// KeyFunc gives an object its identity in the queue. Two objects with the
// same key are two states of the same thing: their deltas share one Item.
// A KeyFunc must be deterministic and must not depend on fields that change
// over the object's life (only namespace and name do not).
type KeyFunc func(obj runtime.Object) (string, error)

// MetaNamespaceKey is the default KeyFunc: "namespace/name", or just "name"
// for a cluster-scoped object. It is the same key format as client-go's, so
// keys read from logs or from a lister mean the same thing in both worlds.
func MetaNamespaceKey(obj runtime.Object) (string, error) {
	if isNil(obj) {
		return "", ErrNilObject
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", fmt.Errorf("key of %T: %w", obj, err)
	}
	name := m.GetName()
	if name == "" {
		return "", fmt.Errorf("key of %T: %w", obj, ErrNoName)
	}
	if ns := m.GetNamespace(); ns != "" {
		return ns + "/" + name, nil
	}
	return name, nil
}

// isNil reports whether obj is nil or an interface holding a nil pointer.
// The second case matters: (*v1.Pod)(nil) is a non-nil runtime.Object whose
// methods panic, and the queue promises a clear error instead of a panic.
func isNil(obj runtime.Object) bool {
	if obj == nil {
		return true
	}
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
