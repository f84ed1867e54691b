package reflector

import (
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/validate/content"
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

// admitObject is the one check an object to be stored passes on its way in
// (a list item; an ADDED, MODIFIED or DELETED event, of a watch or of a
// WatchList's initial state): its type and metadata (typeCheck.admit), a
// name, a name and a namespace that can make a key (validIdentity), then
// its scope (scope.go). The caller reports what fails and skips it: it
// never reaches the store, so no handler hears of it. It runs on the
// goroutine executing Run, for every event, so it reads the name and the
// namespace once for all the checks, and calls them only when they may
// have something to say.
func (r *Reflector) admitObject(obj runtime.Object) (metav1.Object, error) {
	m, err := r.check.admit(obj)
	if err != nil {
		return nil, err
	}
	name, ns := m.GetName(), m.GetNamespace()
	// A name is the one thing every stored object is keyed by. A server
	// never sends an object without one; a cache that filed it under "" or
	// "ns/" would hold what no key on the server names. (A BOOKMARK's
	// object has no name: it carries only a resourceVersion, and goes
	// through admit alone.)
	if name == "" {
		return nil, fmt.Errorf("%w: %T", ErrNoName, obj)
	}
	if !plainIdentity(name, ns) { // a fast path: identity_fast.go
		if err := validIdentity(name, ns); err != nil {
			return nil, err
		}
	}
	if !r.scope.everything() {
		if err := r.scope.admit(m, name, ns); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// validIdentity checks what an object's key is made of, by Kubernetes' own
// rules (apimachinery's api/validate/content): a name that can be a path
// segment of its own (not "." or "..", no "/" or "%"), and a namespace that
// is a DNS-1123 label, or none for a cluster-scoped object. The server
// enforces both on every write, so an object that breaks them did not come
// from it, and it would do harm: pod "a/b" of namespace "default" and pod
// "b" of namespace "default/a" share the key "default/a/b", so one would
// overwrite the other, and a name such as "../../etc" would be cached
// under a key that names a path, not an object.
func validIdentity(name, ns string) error {
	if msgs := content.IsPathSegmentName(name); len(msgs) > 0 {
		return fmt.Errorf("%w: name %q: %s", ErrInvalidName, clip(name), strings.Join(msgs, ", "))
	}
	if ns == "" {
		return nil
	}
	if !validNamespace(ns) {
		return fmt.Errorf("%w: namespace %q: %s", ErrInvalidName, clip(ns), strings.Join(content.IsDNS1123Label(ns), ", "))
	}
	return nil
}

// validNamespace is the rule for a namespace's name: a DNS-1123 label.
func validNamespace(ns string) bool { return len(content.IsDNS1123Label(ns)) == 0 }

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
