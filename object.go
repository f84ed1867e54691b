package informer

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
)

// newObject makes a fresh zero value of the pointer type T (T is *corev1.Pod,
// so the zero T is a nil pointer, which cannot tell the scheme its kind).
func newObject[T runtime.Object]() (runtime.Object, error) {
	var zero T
	t := reflect.TypeOf(zero)
	if t == nil || t.Kind() != reflect.Pointer {
		return nil, fmt.Errorf("informer: %v is not a pointer to a struct: %w", t, ErrUnknownType)
	}
	obj, ok := reflect.New(t.Elem()).Interface().(runtime.Object)
	if !ok {
		return nil, fmt.Errorf("informer: %v: %w", t, ErrUnknownType)
	}
	return obj, nil
}
