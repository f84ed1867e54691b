package share

// A pod's parts found by their protobuf bytes: how reflector/wire's
// protobuf decoder takes a part the table keeps instead of decoding it
// (reflector/wire/protobuf_parts.go says when it asks). The table keeps
// each slice and struct under the hash of its rendering, which is the
// field's bytes in its parent message as the generated Marshal writes them
// (render), and so as the API server sends them: the bytes a decoder reads
// are the key, without decoding them. A map of strings is kept under the
// sum of its entries' hashes (stringMap), which the decoder computes from
// the entries it reads.
//
// Why it is correct: a kept value is taken only when its rendering equals
// the bytes in full, or, for a map, when it holds each entry of the bytes
// and no other (the hash only says where to look, and is seeded). The
// generated Unmarshal of a kept value's rendering gives an equal value, up
// to what the API does not tell apart either (a nil and an empty list
// inside an element, doc.go; a quantity's format, when the kept one came
// from a string that was not canonical: "0.5Ki" renders as "512", which
// decodes as a decimal quantity, equal in value and in Semantic equality),
// so the pod holds what decoding the bytes would have given it. A server that writes a part otherwise (another
// field order, an unknown field, a non-canonical quantity) is not fooled,
// only missed: its bytes are decoded as before.
//
// Found by its bytes: rendering a kept value to compare it costs about as
// much as decoding the bytes would (a container's resource lists are maps,
// whose keys the generated Marshal sorts and whose quantities it formats
// anew each time). So the first time a value is found, the table keeps the
// bytes it was found by (Table.raws), which are its rendering: later
// lookups compare the bytes they are given with those, in full, and never
// render the value again. A map of labels keeps its bytes too: mapEntries
// accepts its entries in one order only (the keys increasing), so bytes
// equal to those it was found by hold the same entries, and its entries
// are no longer looked up one by one. (A map found both as labels and as
// a node selector is found by the bytes of the first only, whose field
// key differs: under the other it is decoded, as if not kept.) A value that is never found so keeps no bytes,
// as values decoded from JSON: only values a protobuf decoder takes more
// than once pay for them, charged to the budget with the value.
//
// Why it is safe: the table keeps a value only from Share, after the
// decoder interned its strings, and nothing writes to a kept value any
// more; a pod that takes one must not walk it again (the decoder hides it
// from Strings and Share, as the parts it takes from its own cache).

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"

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
	Labels                      // metadata.labels (ObjectMeta field 11)
	NodeSelector                // spec.nodeSelector (PodSpec field 7)
)

// FindPodPart is FindPart with the part named by its field numbers from
// the Pod message down ({1, 13} is metadata.ownerReferences, {2, 2}
// spec.containers): reflector/wire's PodParts, which the root package
// hands to the decoders. A path FindPart does not know finds nothing.
func (t *Table) FindPodPart(path [2]int32, raw []byte, p *corev1.Pod) bool {
	return t.FindPart(partAt(path), raw, p)
}

// partAt is the Part at path, or NoPart.
func partAt(path [2]int32) Part {
	switch path {
	case [2]int32{1, 13}:
		return OwnerReferences
	case [2]int32{1, 11}:
		return Labels
	case [2]int32{2, 1}:
		return Volumes
	case [2]int32{2, 20}:
		return InitContainers
	case [2]int32{2, 2}:
		return Containers
	case [2]int32{2, 14}:
		return SecurityContext
	case [2]int32{2, 18}:
		return Affinity
	case [2]int32{2, 22}:
		return Tolerations
	case [2]int32{2, 7}:
		return NodeSelector
	}
	return NoPart
}

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
	switch part {
	case Labels, NodeSelector:
		h, ok := t.mapHash(raw)
		return ok && t.findPart(part, raw, p, h)
	}
	return t.findPart(part, raw, p, t.sliceHash(part.kind(), raw))
}

// mapHash is where stringMap keeps the map whose entries raw holds, the
// occurrences of a map<string, string> field: the sum of its entries'
// hashes, computed from the bytes. false: raw is not as the generated
// Marshal writes a map (mapEntries), and is left to the decoder.
func (t *Table) mapHash(raw []byte) (uint64, bool) {
	var h uint64
	n := 0
	if !mapEntries(raw, func(k, v []byte) bool {
		h += pair(maphash.Bytes(t.seed, k), maphash.Bytes(t.seed, v))
		n++
		return true
	}) {
		return 0, false
	}
	return salt(h, kindStringMap, n), true
}

// keptMapAs sets *dst to the map kept under h when it holds raw's entries
// and no other: raw's keys are distinct (mapEntries checks their order),
// so as many as the kept map's, each with its value there, are all of
// them. Callers hold mu.
func (t *Table) keptMapAs(h uint64, raw []byte, dst *map[string]string) bool {
	e, ok := t.vals[h]
	if !ok {
		return false
	}
	kept, ok := get[map[string]string, mapHolder[map[string]string]](e)
	if !ok {
		return false
	}
	if e.typ&rawKept != 0 {
		// raw's entries, in the one order mapEntries accepts, were found
		// to be kept's: equal bytes hold the same entries.
		if !bytes.Equal(t.raws[h], raw) {
			return false
		}
	} else {
		n := 0
		if !mapEntries(raw, func(k, v []byte) bool {
			n++
			kv, ok := kept[string(k)]
			return ok && kv == string(v)
		}) || n != len(kept) {
			return false
		}
	}
	*dst = kept
	t.found(h, e, raw)
	return true
}

// mapEntries calls f with the key and value of each entry of raw, the
// occurrences of a map<string, string> field, until f returns false. It
// returns false then, and when raw is not as the generated Marshal writes
// a map: each entry its key (field 1) then its value (field 2), and the
// keys in strictly increasing order (the generated Marshal sorts them),
// so that no key comes twice.
func mapEntries(raw []byte, f func(k, v []byte) bool) bool {
	var prev []byte
	for i := 0; len(raw) > 0; i++ {
		key, a := binary.Uvarint(raw)
		if a <= 0 || key&7 != 2 {
			return false
		}
		entry, rest, ok := lengthDelimited(raw[a:])
		if !ok || len(entry) == 0 || entry[0] != 1<<3|2 {
			return false
		}
		k, entry, ok := lengthDelimited(entry[1:])
		if !ok || len(entry) == 0 || entry[0] != 2<<3|2 {
			return false
		}
		v, tail, ok := lengthDelimited(entry[1:])
		if !ok || len(tail) > 0 || (i > 0 && bytes.Compare(prev, k) >= 0) || !f(k, v) {
			return false
		}
		prev, raw = k, rest
	}
	return true
}

// lengthDelimited splits b, which starts with a length-delimited value
// (its length, then its bytes), into that value and the rest.
func lengthDelimited(b []byte) (val, rest []byte, ok bool) {
	l, n := binary.Uvarint(b)
	if n <= 0 || l > uint64(len(b)-n) {
		return nil, nil, false
	}
	return b[n : n+int(l)], b[n+int(l):], true
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
	case Labels:
		return t.keptMapAs(h, raw, &m.Labels)
	case NodeSelector:
		return t.keptMapAs(h, raw, &s.NodeSelector)
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
// The first time it does, the entry keeps raw, its rendering, and is
// found by comparing bytes from then on (Table.raws). Callers hold
// mu.
func keptAs[E any, P interface {
	*E
	message
}](t *Table, kind, h uint64, raw []byte, dst *[]E) bool {
	e, ok := t.vals[h]
	if !ok {
		return false
	}
	kept, ok := get[[]E, sliceHolder[E]](e)
	if !ok || !rendersAs[E, P](t, kind, h, kept, raw) {
		return false
	}
	*dst = kept
	t.found(h, e, raw)
	return true
}

// found counts a find of e, the entry under h, by raw, and has the table
// keep raw for it the first time. Callers hold mu.
func (t *Table) found(h uint64, e valueEntry, raw []byte) {
	var cost uint16
	// raw renders a value kept under maxCost (at most maxValue bytes), so
	// the sum stays under it too; the test keeps cost from overflowing
	// if that ever changed.
	if e.typ&rawKept == 0 && int(e.cost)+len(raw)/costUnit < maxCost/costUnit {
		cost = costUnits(len(raw) + rawOverhead)
		t.raws[h] = bytes.Clone(raw)
		e.typ |= rawKept
		e.cost += cost
	}
	if e.hits < maxHits {
		e.hits++
	} else if cost == 0 {
		return // no write: this runs for most parts of most pods
	}
	t.vals[h] = e
	if cost > 0 {
		t.makeRoom(int(cost) * costUnit) // last: it may age e out, which is fine
	}
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
