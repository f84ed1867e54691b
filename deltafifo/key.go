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
	var buf [keyBufLen]byte
	b, err := AppendMetaNamespaceKey(buf[:0], obj)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// keyBufLen is room on the stack for the keys of nearly all objects: a
// namespace and a name of 63 characters each, with room to spare.
const keyBufLen = 128

// AppendMetaNamespaceKey appends obj's MetaNamespaceKey to dst. It lets a
// KeyFunc build a key without allocating, to look it up before deciding to
// keep it (see informer's use of indexer.Indexer.Intern).
func AppendMetaNamespaceKey(dst []byte, obj runtime.Object) ([]byte, error) {
	if isNil(obj) {
		return dst, ErrNilObject
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return dst, fmt.Errorf("key of %T: %w", obj, err)
	}
	name := m.GetName()
	if name == "" {
		return dst, fmt.Errorf("key of %T: %w", obj, ErrNoName)
	}
	if ns := m.GetNamespace(); ns != "" {
		dst = append(dst, ns...)
		dst = append(dst, '/')
	}
	return append(dst, name...), nil
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
