package share

// How the table holds the maps and slices it keeps: weakly. An object that
// is replaced (a pod updated, with annotations of its own) or deleted
// leaves its values to the garbage collector when no other cached object
// holds them, as reference counts would, without a hook in the cache: the
// table keeps only its entry, which the next pass of aging (or the next
// value under the same hash) drops. Strings are kept as they were: a
// string is small, and most are met again.
//
// A weak pointer is to one allocation: a slice's array (its first
// element), or a map (a map value is one pointer to the runtime's map, the
// allocation that every copy of the map value shares). Each entry keeps
// the Go type of its value, and a value is rebuilt only as that type.

import (
	"reflect"
	"unsafe"
	"weak"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ref is a kept value, held weakly: the allocation it starts at and, for
// a slice, its length.
type ref struct {
	p   weak.Pointer[byte]
	n   int
	typ reflect.Type // the value's type: a value is rebuilt only as it
}

// holder turns a value into what a ref holds, and back.
type holder[V any] interface {
	hold(v V) (p *byte, n int)
	value(p *byte, n int) V
}

// sliceHolder holds a slice by its array: rebuilt, its capacity is its
// length, so that no append can write past what was kept.
type sliceHolder[E any] struct{}

func (sliceHolder[E]) hold(s []E) (*byte, int) {
	return (*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)
}

func (sliceHolder[E]) value(p *byte, n int) []E { return unsafe.Slice((*E)(unsafe.Pointer(p)), n) }

// keptMap is the map types the table keeps.
type keptMap interface {
	~map[string]string | ~map[string][]byte | ~map[corev1.ResourceName]resource.Quantity
}

// mapHolder holds a map by the runtime's map it points to.
type mapHolder[M keptMap] struct{}

func (mapHolder[M]) hold(m M) (*byte, int) { return *(**byte)(unsafe.Pointer(&m)), 0 }

func (mapHolder[M]) value(p *byte, _ int) M { return *(*M)(unsafe.Pointer(&p)) }

// makeRef holds v weakly.
func makeRef[V any, H holder[V]](v V) ref {
	var h H
	p, n := h.hold(v)
	return ref{p: weak.Make(p), n: n, typ: reflect.TypeFor[V]()}
}

// get returns the value r holds, as a V, or false when it was collected
// or is of another type.
func get[V any, H holder[V]](r ref) (V, bool) {
	var h H
	var zero V
	if r.typ != reflect.TypeFor[V]() {
		return zero, false
	}
	p := r.p.Value()
	if p == nil {
		return zero, false
	}
	return h.value(p, r.n), true
}

// alive reports whether the value r holds is still held by someone.
func (r ref) alive() bool { return r.p.Value() != nil }
