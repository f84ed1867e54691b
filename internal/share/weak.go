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
// the Go type of its value, as a number of one byte (typeID), and a value
// is rebuilt only as that type.

import (
	"fmt"
	"unsafe"
	"weak"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// holder turns a value into what an entry holds, and back.
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

// typeID numbers the types of the values a table keeps: an entry keeps
// its value's number and is rebuilt only as the type of that number. A type
// the table does not know is a mistake of this package's, found by its
// first test that keeps one.
func typeID[V any]() uint8 {
	switch any((*V)(nil)).(type) {
	case *[]byte:
		return 1
	case *map[string]string:
		return 2
	case *map[string][]byte:
		return 3
	case *corev1.ResourceList:
		return 4
	case *[]corev1.Container:
		return 5
	case *[]corev1.Volume:
		return 6
	case *[]corev1.Toleration:
		return 7
	case *[]metav1.OwnerReference:
		return 8
	case *[]corev1.Taint:
		return 9
	case *[]corev1.ContainerImage:
		return 10
	case *[]corev1.PodSecurityContext:
		return 11
	case *[]corev1.Affinity:
		return 12
	}
	panic(fmt.Sprintf("share: no typeID for %T", (*V)(nil)))
}

// holdWeakly returns an entry that holds v weakly, with one hit.
func holdWeakly[V any, H holder[V]](v V) valueEntry {
	var h H
	p, n := h.hold(v)
	return valueEntry{p: weak.Make(p), n: uint32(n), typ: typeID[V](), hits: 1}
}

// get returns the value e holds, as a V, or false when it was collected
// or is of another type.
func get[V any, H holder[V]](e valueEntry) (V, bool) {
	var h H
	var zero V
	if e.typ&^rawKept != typeID[V]() {
		return zero, false
	}
	p := e.p.Value()
	if p == nil {
		return zero, false
	}
	return h.value(p, int(e.n)), true
}

// alive reports whether the value e holds is still held by someone.
func (e valueEntry) alive() bool { return e.p.Value() != nil }
