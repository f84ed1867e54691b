package objkey

import (
	"errors"
	"fmt"
	"reflect"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

var (
	// ErrNilObject is returned for a nil object, or an interface holding a
	// nil pointer. deltafifo.ErrNilObject and indexer.ErrNilObject are this
	// error, so errors.Is matches it whichever layer refused the object.
	ErrNilObject = errors.New("nil object")
	// ErrNoName is returned for an object without a name: it has no
	// identity, so it cannot have a key. deltafifo.ErrNoName is this error.
	ErrNoName = errors.New("object has no name")
)

// Of returns obj's key: "namespace/name", or "name" when obj has no
// namespace. It fails with ErrNilObject for a nil obj, ErrNoName for an
// object without a name, and meta.Accessor's error for an object without
// Kubernetes metadata.
func Of(obj runtime.Object) (string, error) {
	namespace, name, err := parts(obj)
	if err != nil {
		return "", err
	}
	return Join(namespace, name), nil
}

// Join returns the key of the object called name in namespace ("" for a
// cluster-scoped object): what Of returns for that object.
func Join(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// parts reads the two fields a key is made of, and refuses an object that
// cannot have one.
func parts(obj runtime.Object) (namespace, name string, err error) {
	if IsNil(obj) {
		return "", "", ErrNilObject
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", "", fmt.Errorf("key of %T: %w", obj, err)
	}
	name = m.GetName()
	if name == "" {
		return "", "", fmt.Errorf("key of %T: %w", obj, ErrNoName)
	}
	return m.GetNamespace(), name, nil
}

// IsNil reports whether obj is nil or an interface holding a nil pointer.
// The second case matters: (*v1.Pod)(nil) is a non-nil runtime.Object whose
// methods panic, and the queue and the cache promise a clear error instead.
// It takes any, because the reflector asks it of what a ListerWatcher
// returns too (a list, a watch.Interface), where a typed nil panics alike.
//
// It runs several times for every watch event (reflector, queue, cache), so
// it reads the interface's data word instead of calling reflect.Value's
// IsNil: a pointer is stored in an interface as itself, so that word is
// nil exactly when the pointer is. That word is read first: a value of
// any other type is stored behind a pointer the runtime made, never nil, so
// a non-nil word is a non-nil object, and only a nil one (a nil interface,
// or a nil pointer, map, channel or func, or a struct of one nil pointer)
// needs its kind looked up. The fast path is small enough to be inlined
// where it is called.
func IsNil(obj any) bool {
	if (*[2]unsafe.Pointer)(unsafe.Pointer(&obj))[1] != nil {
		return false
	}
	return nilWord(obj)
}

// nilWord is IsNil for an obj whose data word is nil: the nil interface,
// or a value of a pointer kind.
func nilWord(obj any) bool {
	return obj == nil || reflect.TypeOf(obj).Kind() == reflect.Pointer
}
