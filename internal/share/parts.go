package share

// A pod's parts found by their protobuf bytes: how reflector/wire's
// protobuf decoder takes a part the table keeps instead of decoding it
// (reflector/wire/protobuf_parts.go says when it asks). The table keeps
// each slice and struct under the hash of its rendering, which is the
// field's bytes in its parent message as the generated Marshal writes them
// (render), and so as the API server sends them: the bytes a decoder reads
// are the key, without decoding them.
//
// Why it is correct: a kept value is taken only when its rendering equals
// the bytes in full (the hash only says where to look, and is seeded). The
// generated Unmarshal of a kept value's rendering gives an equal value, up
// to what the API does not tell apart either (a nil and an empty list
// inside an element, doc.go), so the pod holds what decoding the bytes
// would have given it. A server that writes a part otherwise (another
// field order, an unknown field, a non-canonical quantity) is not fooled,
// only missed: its bytes are decoded as before.
//
// Why it is safe: the table keeps a value only from Share, after the
// decoder interned its strings, and nothing writes to a kept value any
// more; a pod that takes one must not walk it again (the decoder hides it
// from Strings and Share, as the parts it takes from its own cache).

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Part names a part of a pod that FindPart can find by its protobuf bytes.
type Part uint8

// The parts FindPart knows: those Share keeps whole.
const (
	NoPart          Part = iota // none: FindPart finds nothing
	OwnerReferences             // metadata.ownerReferences (ObjectMeta field 13)
	Volumes                     // spec.volumes (PodSpec field 1)
	InitContainers              // spec.initContainers (PodSpec field 20)
	Containers                  // spec.containers (PodSpec field 2)
	SecurityContext             // spec.securityContext (PodSpec field 14)
	Affinity                    // spec.affinity (PodSpec field 18)
	Tolerations                 // spec.tolerations (PodSpec field 22)
)

// FindPart sets p's part to the kept value whose protobuf bytes are raw:
// the field's occurrences in its parent message, keys included, as the
// API server writes them. It reports whether it found one; p is unchanged
// otherwise. p then shares the part with other objects of the cache, and
// must not be modified, nor its part interned or shared again.
func (t *Table) FindPart(part Part, raw []byte, p *corev1.Pod) bool {
	if t == nil || part == NoPart || len(raw) == 0 || len(raw) > maxValue {
		return false
	}
	t.lock()
	defer t.mu.Unlock()
	return t.findPart(part, raw, p, t.sliceHash(part.kind(), raw))
}

// findPart is FindPart with the hash given, so that a test can make two
// parts' hashes collide.
func (t *Table) findPart(part Part, raw []byte, p *corev1.Pod, h uint64) bool {
	m, s := &p.ObjectMeta, &p.Spec
	switch part {
	case OwnerReferences:
		return keptAs[metav1.OwnerReference](t, sliceOwners, h, raw, &m.OwnerReferences)
	case Volumes:
		return keptAs[corev1.Volume](t, sliceVolumes, h, raw, &s.Volumes)
	case InitContainers:
		return keptAs[corev1.Container](t, sliceInitContainers, h, raw, &s.InitContainers)
	case Containers:
		return keptAs[corev1.Container](t, sliceContainers, h, raw, &s.Containers)
	case SecurityContext:
		return keptPtrAs(t, ptrPodSecurityContext, h, raw, &s.SecurityContext)
	case Affinity:
		return keptPtrAs(t, ptrAffinity, h, raw, &s.Affinity)
	case Tolerations:
		return keptAs[corev1.Toleration](t, sliceTolerations, h, raw, &s.Tolerations)
	}
	return false
}

// kind is the call site whose kept values part finds.
func (part Part) kind() uint64 {
	switch part {
	case OwnerReferences:
		return sliceOwners
	case Volumes:
		return sliceVolumes
	case InitContainers:
		return sliceInitContainers
	case Containers:
		return sliceContainers
	case SecurityContext:
		return ptrPodSecurityContext
	case Affinity:
		return ptrAffinity
	case Tolerations:
		return sliceTolerations
	}
	return 0
}

// keptAs sets *dst to the slice kept under h when it renders as raw.
// Callers hold mu.
func keptAs[E any, P interface {
	*E
	message
}](t *Table, kind, h uint64, raw []byte, dst *[]E) bool {
	e, ok := t.vals[h]
	if !ok {
		return false
	}
	kept, ok := get[[]E, sliceHolder[E]](e.ref)
	if !ok || !rendersAs[E, P](t, kind, kept, raw) {
		return false
	}
	if e.hits < maxHits {
		e.hits++
		t.vals[h] = e
	}
	*dst = kept
	return true
}

// keptPtrAs is keptAs for a pointer to a struct (ptr keeps it as a
// slice of one).
func keptPtrAs[E any, P interface {
	*E
	message
}](t *Table, kind, h uint64, raw []byte, dst **E) bool {
	var s []E
	if !keptAs[E, P](t, kind, h, raw, &s) {
		return false
	}
	*dst = &s[0]
	return true
}
