package reflector

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer/internal/objkey"
)

// typeCheck decides whether an object may enter the store. It is built once
// from Options.ExpectedType and is read-only afterwards, so it is safe for
// concurrent use.
type typeCheck struct {
	want reflect.Type             // nil: any Go type
	gvk  *schema.GroupVersionKind // for unstructured prototypes with a kind
}

func newTypeCheck(prototype runtime.Object) typeCheck {
	if prototype == nil {
		return typeCheck{}
	}
	tc := typeCheck{want: reflect.TypeOf(prototype)}
	// An Unstructured is every kind at once as far as Go types go; only its
	// GroupVersionKind tells a Pod from a Secret.
	if u, ok := prototype.(*unstructured.Unstructured); ok {
		if gvk := u.GroupVersionKind(); !gvk.Empty() {
			tc.gvk = &gvk
		}
	}
	return tc
}

// admit returns obj's metadata if obj may be stored, or an error wrapping
// ErrWrongType or errNoMetadata. Why check at all: a misconfigured
// ListerWatcher (the wrong resource path), a server bug or a hostile proxy
// must not corrupt a typed cache whose readers cast without checking.
func (tc typeCheck) admit(obj runtime.Object) (metav1.Object, error) {
	if obj == nil {
		return nil, fmt.Errorf("%w: nil object", errNoMetadata)
	}
	if objkey.IsNil(obj) {
		return nil, fmt.Errorf("%w: nil %T", errNoMetadata, obj)
	}
	if tc.want != nil {
		if got := reflect.TypeOf(obj); got != tc.want {
			return nil, fmt.Errorf("%w: got %v, want %v", ErrWrongType, got, tc.want)
		}
	}
	if tc.gvk != nil {
		if got := obj.GetObjectKind().GroupVersionKind(); got != *tc.gvk {
			return nil, fmt.Errorf("%w: got %v, want %v", ErrWrongType, got, *tc.gvk)
		}
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, fmt.Errorf("%w: %T: %v", errNoMetadata, obj, err)
	}
	return m, nil
}

// admitNamed is admit for an object that is to be stored (a list item, an
// ADDED, MODIFIED or DELETED event): it must also have a name, the one
// thing every stored object is keyed by. A server never sends an object
// without one; a cache that filed it under "" or "ns/" would hold what no
// key on the server names. (A BOOKMARK's object has no name: it carries
// only a resourceVersion, and goes through admit alone.)
func (tc typeCheck) admitNamed(obj runtime.Object) (metav1.Object, error) {
	m, err := tc.admit(obj)
	if err == nil && m.GetName() == "" {
		return nil, fmt.Errorf("%w: %T", ErrNoName, obj)
	}
	return m, err
}

// typeName names a prototype for Options.Name: its GroupVersionKind for a
// typed unstructured prototype, its Go type otherwise.
func typeName(prototype runtime.Object) string {
	if u, ok := prototype.(*unstructured.Unstructured); ok {
		if gvk := u.GroupVersionKind(); !gvk.Empty() {
			return gvk.String()
		}
	}
	return reflect.TypeOf(prototype).String()
}

// objectKey is namespace/name, the identity used to fold MODIFIED and
// DELETED events into a WatchList's initial state.
func objectKey(m metav1.Object) string {
	return objkey.Join(m.GetNamespace(), m.GetName())
}
