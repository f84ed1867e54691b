package fakeapi

import (
	"fmt"
	"reflect"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
)

// store is the server's database: the current objects of every resource,
// the global resourceVersion counter, the event log, and the record of
// writes. It plays the role etcd plays behind a real API server.
//
// It is a deterministic state machine: no goroutines, no locks, no
// randomness, and time only through the injected now. The same calls in the
// same order give the same objects, RVs and UIDs, which is what makes it
// testable step by step. The Server serialises every call with its mutex,
// so store itself is not safe for concurrent use.
//
// Stored objects are immutable once stored: every write stores a fresh
// copy, and readers (lists, watches, the write record) share the pointers
// without copying.
type store struct {
	rv      uint64
	buckets map[*resourceInfo]*bucket
	log     eventLog
	now     func() time.Time
	// uids counts created objects; UIDs are derived from it so that runs
	// are reproducible.
	uids   uint64
	writes writeRecord
	// serviceIPs counts the cluster IPs handed out (admission.go).
	serviceIPs uint64
	// tracker records an HTTP write in managedFields (fieldmanager.go);
	// nil records nothing (a store used alone, in its tests).
	tracker func(req requestInfo, obj, live runtime.Object, now time.Time) error
	// gc follows ownerReferences for the garbage collector (gc.go).
	gc collector
}

// track records an HTTP write by req of obj over live (nil for a create)
// in obj's managedFields.
func (s *store) track(req requestInfo, obj, live runtime.Object) error {
	if s.tracker == nil {
		return nil
	}
	return s.tracker(req, obj, live, s.now())
}

// bucket holds the current objects of one resource by key.
type bucket struct {
	objects map[string]runtime.Object
	// sorted caches the keys in order for paging; nil when a create or
	// delete has made it stale. Updates keep it valid.
	sorted []string
}

func newStore(window, historyLimit int, now func() time.Time) *store {
	return &store{
		buckets: map[*resourceInfo]*bucket{},
		log:     eventLog{window: window},
		now:     now,
		writes:  writeRecord{limit: historyLimit},
	}
}

func (s *store) bucket(ri *resourceInfo) *bucket {
	b := s.buckets[ri]
	if b == nil {
		b = &bucket{objects: map[string]runtime.Object{}}
		s.buckets[ri] = b
	}
	return b
}

func (b *bucket) sortedKeys() []string {
	if b.sorted == nil {
		b.sorted = make([]string, 0, len(b.objects))
		for k := range b.objects {
			b.sorted = append(b.sorted, k)
		}
		sort.Strings(b.sorted)
	}
	return b.sorted
}

// objectKey is the storage key: "namespace/name", or "name" for
// cluster-scoped objects. Sorting keys sorts a namespace's objects together,
// which is how paged lists of one namespace stay contiguous.
func objectKey(ri *resourceInfo, namespace, name string) string {
	if !ri.ClusterScoped {
		return namespace + "/" + name
	}
	return name
}

// get returns the stored object, or NotFound.
func (s *store) get(ri *resourceInfo, namespace, name string) (runtime.Object, error) {
	obj, ok := s.bucket(ri).objects[objectKey(ri, namespace, name)]
	if !ok {
		return nil, apierrors.NewNotFound(ri.groupResource(), name)
	}
	return obj, nil
}

// create stores obj, which must be a private copy the caller hands over.
func (s *store) create(ri *resourceInfo, obj runtime.Object) (runtime.Object, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if m.GetName() == "" && m.GetGenerateName() != "" {
		// Real servers add five random characters; ours are derived from
		// the next RV so runs are reproducible and names never collide.
		m.SetName(m.GetGenerateName() + generatedSuffix(s.rv+1))
	}
	if err := validateMeta(ri, m); err != nil {
		return nil, err
	}
	b := s.bucket(ri)
	key := objectKey(ri, m.GetNamespace(), m.GetName())
	if _, exists := b.objects[key]; exists {
		return nil, apierrors.NewAlreadyExists(ri.groupResource(), m.GetName())
	}
	s.uids++
	m.SetUID(types.UID(fmt.Sprintf(uidPrefix+"%012x", s.uids)))
	m.SetCreationTimestamp(metav1.NewTime(s.now()))
	if ri.generation {
		m.SetGeneration(1)
	}
	defaultOnCreate(ri, obj)
	m.SetDeletionTimestamp(nil)
	return s.commit(ri, key, watch.Added, obj, nil), nil
}

// update replaces the stored object with obj (a private copy). A non-empty
// resourceVersion in obj is a precondition: it must equal the stored one.
func (s *store) update(ri *resourceInfo, obj runtime.Object) (runtime.Object, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if err := validateMeta(ri, m); err != nil {
		return nil, err
	}
	key := objectKey(ri, m.GetNamespace(), m.GetName())
	old, ok := s.bucket(ri).objects[key]
	if !ok {
		return nil, apierrors.NewNotFound(ri.groupResource(), m.GetName())
	}
	oldMeta, _ := meta.Accessor(old)
	if rv := m.GetResourceVersion(); rv != "" && rv != oldMeta.GetResourceVersion() {
		return nil, conflict(ri.groupResource(), m.GetName())
	}
	// Identity and server-owned fields survive an update whatever the
	// client sent.
	m.SetUID(oldMeta.GetUID())
	m.SetCreationTimestamp(oldMeta.GetCreationTimestamp())
	m.SetGeneration(oldMeta.GetGeneration())
	m.SetResourceVersion(oldMeta.GetResourceVersion())
	setTypeMeta(ri, obj)
	defaultOnUpdate(ri, obj, old)
	// Like etcd's guaranteed update, writing identical bytes is not a
	// write: no new RV, no event. Controllers rely on this to avoid
	// hot loops.
	if equality.Semantic.DeepEqual(old, obj) {
		return old, nil
	}
	if ri.generation && specChanged(old, obj) || ri.unstructured && unstructuredSpecChanged(old.(*unstructured.Unstructured), obj.(*unstructured.Unstructured)) {
		m.SetGeneration(oldMeta.GetGeneration() + 1)
	}
	return s.commit(ri, key, watch.Modified, obj, old), nil
}

// preconditions guard a delete, as metav1.Preconditions do on the wire.
type preconditions struct {
	uid             types.UID
	resourceVersion string
}

// check fails a delete whose preconditions the stored object does not meet
// with the real server's Conflict: unlike an update's, it names the kind
// ("Pod", "Deployment.apps"), not the resource, and says which
// precondition failed.
func (p preconditions) check(ri *resourceInfo, stored metav1.Object) error {
	gr := schema.GroupResource{Group: ri.Kind.Group, Resource: ri.Kind.Kind}
	switch {
	case p.uid != "" && p.uid != stored.GetUID():
		return apierrors.NewConflict(gr, stored.GetName(), fmt.Errorf(
			"the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated",
			p.uid, stored.GetUID()))
	case p.resourceVersion != "" && p.resourceVersion != stored.GetResourceVersion():
		return apierrors.NewConflict(gr, stored.GetName(), fmt.Errorf(
			"the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified",
			p.resourceVersion, stored.GetResourceVersion()))
	}
	return nil
}

// delete removes the object and returns its final state, stamped with the
// deletion's resourceVersion.
func (s *store) delete(ri *resourceInfo, namespace, name string, pre preconditions) (runtime.Object, error) {
	key := objectKey(ri, namespace, name)
	old, ok := s.bucket(ri).objects[key]
	if !ok {
		return nil, apierrors.NewNotFound(ri.groupResource(), name)
	}
	oldMeta, _ := meta.Accessor(old)
	if err := pre.check(ri, oldMeta); err != nil {
		return nil, err
	}
	return s.commit(ri, key, watch.Deleted, old.DeepCopyObject(), old), nil
}

// deleteHonouringFinalizers is delete for a client's DELETE: an object
// with finalizers is only marked (finalizers.go).
func (s *store) deleteHonouringFinalizers(ri *resourceInfo, namespace, name string, pre preconditions) (runtime.Object, error) {
	key := objectKey(ri, namespace, name)
	old, ok := s.bucket(ri).objects[key]
	if !ok {
		return nil, apierrors.NewNotFound(ri.groupResource(), name)
	}
	oldMeta, _ := meta.Accessor(old)
	if err := pre.check(ri, oldMeta); err != nil {
		return nil, err
	}
	if marked, kept := s.markDeleting(ri, key, old); kept {
		return marked, nil
	}
	return s.delete(ri, namespace, name, preconditions{})
}

// commit is the single write path: it takes the next RV, stamps it on obj,
// applies the change, and appends the event to the log and the record.
func (s *store) commit(ri *resourceInfo, key string, typ watch.EventType, obj, prev runtime.Object) runtime.Object {
	s.rv++
	m, _ := meta.Accessor(obj)
	m.SetResourceVersion(formatRV(s.rv))
	setTypeMeta(ri, obj)
	b := s.bucket(ri)
	switch typ {
	case watch.Added:
		b.objects[key] = obj
		b.sorted = nil
	case watch.Modified:
		b.objects[key] = obj
	case watch.Deleted:
		delete(b.objects, key)
		b.sorted = nil
	}
	s.gc.observe(ri, key, typ, obj, prev)
	ev := event{rv: s.rv, typ: typ, res: ri, key: key, obj: obj, prev: prev}
	s.log.append(ev)
	s.writes.add(ev)
	return obj
}

// compact forgets all history up to the current RV.
func (s *store) compact() { s.log.compact(s.rv) }

// setTypeMeta stamps apiVersion and kind on a stored object. Stored objects
// carry their type so they can be encoded without a conversion step (which
// would copy every object of a 100k-item list).
func setTypeMeta(ri *resourceInfo, obj runtime.Object) {
	obj.GetObjectKind().SetGroupVersionKind(ri.Kind)
}

// validateMeta applies the metadata rules every real resource enforces,
// answering 422 Invalid like the real server.
func validateMeta(ri *resourceInfo, m metav1.Object) error {
	var errs field.ErrorList
	name := m.GetName()
	if name == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "name"), "name or generateName is required"))
	}
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		if name != "" {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), name, msg))
		}
	}
	ns := m.GetNamespace()
	switch {
	case !ri.ClusterScoped && ns == "":
		errs = append(errs, field.Required(field.NewPath("metadata", "namespace"), ""))
	case !ri.ClusterScoped:
		for _, msg := range validation.IsDNS1123Label(ns) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "namespace"), ns, msg))
		}
	case ns != "":
		errs = append(errs, field.Forbidden(field.NewPath("metadata", "namespace"), "not allowed on this type"))
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(ri.Kind.GroupKind(), name, errs)
	}
	return nil
}

// hasSpec tells whether obj's type has a Spec field.
func hasSpec(obj runtime.Object) bool {
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.Elem().Kind() == reflect.Struct && v.Elem().FieldByName("Spec").IsValid()
}

// specChanged tells whether the objects' Spec fields differ; a real server
// bumps metadata.generation only for spec changes, and controllers compare
// generation with status.observedGeneration.
func specChanged(a, b runtime.Object) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Kind() != reflect.Pointer || vb.Kind() != reflect.Pointer {
		return false
	}
	sa, sb := va.Elem().FieldByName("Spec"), vb.Elem().FieldByName("Spec")
	if !sa.IsValid() || !sb.IsValid() {
		return false
	}
	return !equality.Semantic.DeepEqual(sa.Interface(), sb.Interface())
}

// generatedSuffix turns a number into five characters from the alphabet the
// real server uses for generateName (no vowels, no confusable digits).
func generatedSuffix(n uint64) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	var out [5]byte
	// Mix the bits so consecutive numbers do not give similar names.
	n = n*0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019
	for i := range out {
		out[i] = alphabet[n%uint64(len(alphabet))]
		n /= uint64(len(alphabet))
	}
	return string(out[:])
}
