package fakeapi

import (
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
)

// Finalizers (metadata.finalizers) hold an object back from deletion until
// whoever put them there has cleaned up: a DELETE of an object with
// finalizers only sets its deletionTimestamp (a MODIFIED event), and the
// object goes (a DELETED event) when an update removes the last finalizer.
// While it is being deleted, no finalizer can be added. This is how
// controllers clean up external state before an object disappears, and
// what the real server does for every resource; fakeapi does it for HTTP
// writes (the Go API's Delete removes an object at once).

// markDeleting answers a DELETE of an object that has finalizers: it sets
// the deletionTimestamp (once) and keeps the object. It reports false when
// the object has no finalizers and should be deleted now.
func (s *store) markDeleting(ri *resourceInfo, key string, old runtime.Object) (runtime.Object, bool) {
	oldMeta, _ := meta.Accessor(old)
	if len(oldMeta.GetFinalizers()) == 0 {
		return nil, false
	}
	if oldMeta.GetDeletionTimestamp() != nil {
		return old, true
	}
	marked := old.DeepCopyObject()
	m, _ := meta.Accessor(marked)
	now := metav1.NewTime(s.now())
	zero := int64(0)
	m.SetDeletionTimestamp(&now)
	m.SetDeletionGracePeriodSeconds(&zero)
	if ri.generation {
		m.SetGeneration(oldMeta.GetGeneration() + 1)
	}
	return s.commit(ri, key, watch.Modified, marked, old), true
}

// finalizerRules applies, to an HTTP update of stored, the rules of an
// object being deleted: the deletion fields are the server's, no finalizer
// may be added, and the update that removes the last finalizer deletes
// the object. It returns the deleted object when it did so.
func (s *store) finalizerRules(ri *resourceInfo, obj, stored runtime.Object) (runtime.Object, bool, error) {
	m, _ := meta.Accessor(obj)
	sm, _ := meta.Accessor(stored)
	m.SetDeletionTimestamp(sm.GetDeletionTimestamp())
	m.SetDeletionGracePeriodSeconds(sm.GetDeletionGracePeriodSeconds())
	if sm.GetDeletionTimestamp() == nil {
		return nil, false, nil
	}
	for _, f := range m.GetFinalizers() {
		if !slices.Contains(sm.GetFinalizers(), f) {
			return nil, false, apierrors.NewInvalid(ri.Kind.GroupKind(), m.GetName(), field.ErrorList{field.Forbidden(
				field.NewPath("metadata", "finalizers"), "no new finalizers can be added if the object is being deleted")})
		}
	}
	if len(m.GetFinalizers()) > 0 {
		return nil, false, nil
	}
	if rv := m.GetResourceVersion(); rv != "" && rv != sm.GetResourceVersion() {
		return nil, false, conflict(ri.groupResource(), m.GetName())
	}
	setTypeMeta(ri, obj)
	m.SetUID(sm.GetUID())
	m.SetCreationTimestamp(sm.GetCreationTimestamp())
	key := objectKey(ri, sm.GetNamespace(), sm.GetName())
	return s.commit(ri, key, watch.Deleted, obj, stored), true, nil
}
