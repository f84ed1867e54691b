package share

import (
	"unsafe"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Strings replaces obj's repeated strings by the table's copies. It is
// safe on any object its caller owns, before or after a Transform
// (doc.go, "Safe"); the wire decoders call it on everything they decode.
func (t *Table) Strings(obj runtime.Object) { t.walk(obj, false) }

// Share replaces obj's repeated maps, slices and byte slices by the
// table's copies. obj must be the caller's alone and never modified again
// (doc.go, "Safe"). Its strings are left as they are: the decoders
// interned them already.
func (t *Table) Share(obj runtime.Object) { t.walk(obj, true) }

// Objects returns transform composed with Share: the object transform
// returns has its repeated maps, slices and byte slices replaced by the
// table's copies. transform may be nil.
func (t *Table) Objects(transform func(runtime.Object) (runtime.Object, error)) func(runtime.Object) (runtime.Object, error) {
	return func(obj runtime.Object) (runtime.Object, error) {
		if transform != nil {
			var err error
			if obj, err = transform(obj); err != nil {
				return nil, err
			}
		}
		t.Share(obj)
		return obj, nil
	}
}

// walk runs the walker of obj's kind; kinds without one of their own get
// their metadata walked.
func (t *Table) walk(obj runtime.Object, values bool) {
	if t == nil {
		return
	}
	t.lock()
	defer t.mu.Unlock()
	w := walker{t: t, values: values}
	switch o := obj.(type) {
	case *corev1.Pod:
		w.pod(o)
	case *corev1.ConfigMap:
		w.configMap(o)
	case *corev1.Secret:
		w.secret(o)
	case *corev1.Node:
		w.node(o)
	case *appsv1.Deployment:
		w.deployment(o)
	case *appsv1.ReplicaSet:
		w.replicaSet(o)
	case *metav1.PartialObjectMetadata:
		w.meta(&o.ObjectMeta)
	case metav1.ObjectMetaAccessor:
		if m, ok := o.GetObjectMeta().(*metav1.ObjectMeta); ok {
			w.meta(m)
		}
	}
}

// walker visits one object under the table's lock. Each kind's walker
// names every field worth sharing once; values says which pass this is:
// strings only (Strings), or maps, slices and byte slices only (Share).
type walker struct {
	t      *Table
	values bool
}

// str interns the string at p, whatever its named string type.
func str[S ~string](w walker, p *S) {
	if !w.values {
		*p = S(w.t.str(string(*p)))
	}
}

func strs(w walker, ss []string) {
	if w.values {
		return
	}
	for i := range ss {
		ss[i] = w.t.str(ss[i])
	}
}

// stringMap shares the map at p, or interns its keys and values in place.
// Assigning to a key that is present replaces the stored key too, so the
// map keeps the shared copy.
func (w walker) stringMap(p *map[string]string) {
	if w.values {
		*p = w.t.stringMap(*p)
		return
	}
	for k, v := range *p {
		(*p)[w.t.str(k)] = w.t.str(v)
	}
}

// bytesMap shares the map at p, or interns its keys in place.
func (w walker) bytesMap(p *map[string][]byte) {
	if w.values {
		*p = w.t.bytesMap(*p)
		return
	}
	for k, v := range *p {
		(*p)[w.t.str(k)] = v
	}
}

func (w walker) bytes(p *[]byte) {
	if w.values {
		*p = w.t.bytes(*p)
	}
}

func (w walker) resources(r *corev1.ResourceRequirements) {
	w.resourceList(&r.Requests)
	w.resourceList(&r.Limits)
}

func (w walker) resourceList(p *corev1.ResourceList) {
	if w.values {
		*p = w.t.resourceList(*p)
	}
}

// slice shares the whole slice at p when values are shared. It reports
// whether the caller should still walk the elements: always for strings,
// and for values when the slice was not found kept (its parts may be).
func slice[E any, P interface {
	*E
	message
}](w walker, kind uint64, p *[]E) bool {
	if !w.values {
		return true
	}
	var found bool
	*p, found = sharedSlice[E, P](w.t, kind, *p)
	return !found
}

// ptr shares the struct *p points to, as slice shares a slice: *p then
// points to an equal struct that other objects hold. Pods of one template
// point to equal security contexts and affinities, each its own
// allocation as decoded.
func ptr[E any, P interface {
	*E
	message
}](w walker, kind uint64, p **E) {
	if !w.values || *p == nil {
		return
	}
	s, _ := sharedSlice[E, P](w.t, kind, unsafe.Slice(*p, 1))
	*p = &s[0]
}

// exact gives the slice at p its exact size, when the decoder left it
// room to grow: a copy, so it is for slices of the object's own.
func exact[E any](p *[]E) {
	if len(*p) > 0 && cap(*p) > len(*p) {
		*p = append([]E(nil), *p...)
	}
}

// Call sites of slice and ptr, each its own kind.
const (
	sliceContainers uint64 = iota
	sliceInitContainers
	sliceVolumes
	sliceTolerations
	sliceOwners
	sliceTaints
	sliceImages
	ptrPodSecurityContext
	ptrAffinity
)

// fieldOf is the protobuf field number of call site kind in its parent
// message (k8s.io/api/core/v1/generated.proto, apimachinery's
// meta/v1/generated.proto): what render writes before each element.
func fieldOf(kind uint64) uint64 {
	switch kind {
	case sliceContainers:
		return 2 // PodSpec.containers
	case sliceInitContainers:
		return 20 // PodSpec.initContainers
	case sliceVolumes:
		return 1 // PodSpec.volumes
	case sliceTolerations:
		return 22 // PodSpec.tolerations
	case sliceOwners:
		return 13 // ObjectMeta.ownerReferences
	case sliceTaints:
		return 5 // NodeSpec.taints
	case sliceImages:
		return 8 // NodeStatus.images
	case ptrPodSecurityContext:
		return 14 // PodSpec.securityContext
	case ptrAffinity:
		return 18 // PodSpec.affinity
	}
	return 0
}

func (w walker) meta(m *metav1.ObjectMeta) {
	str(w, &m.Namespace)
	str(w, &m.GenerateName)
	w.stringMap(&m.Labels)
	w.stringMap(&m.Annotations)
	strs(w, m.Finalizers)
	if slice(w, sliceOwners, &m.OwnerReferences) {
		for i := range m.OwnerReferences {
			r := &m.OwnerReferences[i]
			str(w, &r.APIVersion)
			str(w, &r.Kind)
			str(w, &r.Name)
			str(w, &r.UID)
		}
	}
	for i := range m.ManagedFields {
		f := &m.ManagedFields[i]
		str(w, &f.Manager)
		str(w, &f.Operation)
		str(w, &f.APIVersion)
		str(w, &f.FieldsType)
		str(w, &f.Subresource)
		if f.FieldsV1 != nil {
			w.bytes(&f.FieldsV1.Raw)
		}
	}
}

func (w walker) labelSelector(s *metav1.LabelSelector) {
	if s == nil {
		return
	}
	w.stringMap(&s.MatchLabels)
	for i := range s.MatchExpressions {
		e := &s.MatchExpressions[i]
		str(w, &e.Key)
		str(w, &e.Operator)
		strs(w, e.Values)
	}
}
