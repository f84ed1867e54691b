package wire

// A pod's repeated parts, decoded once per watch stream or list page: the
// optimisation of protobuf decoding, whose cache json_parts.go shares.
// Delete this file, json_parts.go and json_frames.go, and their hooks
// (the parts field of protoDecoder and its uses, and withPartsHidden, in
// protobuf_decoder.go; json_parts.go's own), and the package is still
// correct, only slower: every pod is then decoded whole by its generated
// Unmarshal, or by encoding/json. protobuf_presize.go and
// protobuf_strings.go serve decodePod only, and go with it.
//
// Why it pays: the pods of one template carry the same containers,
// volumes, tolerations, affinity, labels and owner, byte for byte. A
// decoder that meets those bytes again takes the value it decoded the
// first time instead of decoding them (and allocating them) again, and
// whatever is shared later (internal/share's table) is then already
// shared. BenchmarkWatchDecodeParts (protobuf_parts_bench_test.go) measures
// it.
//
// The cache is a window over the stream: in random order (a churn, where
// the pods of one template come far apart) it has forgotten a template's
// parts when the next of its pods comes. So a part it misses is looked up
// in the informer's share table (Options.PodParts), which keeps every
// distinct value its cache holds, found by the bytes the server sends
// (share.Table.FindPodPart: the table's key for a slice or struct is its
// field's bytes in the parent message, and a kept value is taken only when
// its rendering equals the bytes in full; a map of labels is found by its
// entries, and taken only when it holds those and no other). A part found
// there is neither decoded nor rendered again by the table's own walk: it
// is hidden from interning and sharing, as a part taken from the cache;
// nor is it copied into the cache (keeps says why). A part found nowhere
// is decoded, and Share keeps it after interning, under
// the hash of those same bytes, for the next pod of its template whatever
// the order. BenchmarkWatchDecodePartsChurn measures that regime.
//
// Why it is correct: the parts are split off the pod's bytes by field
// number (protobuf_split.go says why the rest then decodes as it would
// whole) and each is decoded by the generated Unmarshal of its parent
// type; equal bytes, decoded alike, give equal values. A cached part is
// found by its bytes, compared in full, not by a hash alone.
//
// Why it is safe: pods that take a part from the cache share its maps,
// slices and pointers. Only callers that promise never to modify a decoded
// object get this (Options.ShareParts: the informer, when its Transform
// is none or StripManagedFields), and nothing in this package writes
// to a shared part: the interning and the sharing that run on a decoded
// object do not see the parts it took from the cache (hideParts). A cache
// belongs to one decoder, used by one goroutine: a part is written
// (decoded, then interned and shared with its first pod) before any other
// pod can take it. The share table serves every decoder of an informer
// (one per namespace when it is scoped), each on its own goroutine: it
// keeps a value only from Share, once the value's pod was interned, and
// under its lock, which FindPart takes too; nothing writes to a kept
// value after.
//
// It is bounded: a fixed array of slots found by a hash of the bytes, at
// most partMaxBytes bytes a part and partBudget bytes in all. The table
// keeps no bytes, only the values the cache holds anyway (weakly), within
// its own budget (internal/share/doc.go, "Bounded").

import (
	"bytes"
	"hash/maphash"
	"slices"

	"github.com/seed31a95821/informer/internal/share"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	partSlots    = 256 // a power of two
	partWays     = 4   // slots per bucket
	partMaxBytes = 16 << 10
	partBudget   = 1 << 20 // bytes of parts kept at once, at most

	partMissRun = 64 // misses in a row of one part past which few of its values are kept (keeps)
	partSample  = 16 // then one value in partSample is kept
)

// partID names one part of a pod: a field of its metadata or of its spec.
type partID uint8

const (
	partLabels partID = iota
	partAnnotations
	partOwnerReferences
	partFinalizers
	partVolumes
	partInitContainers
	partContainers
	partNodeSelector
	partSecurityContext
	partImagePullSecrets
	partAffinity
	partTolerations
	partTopologySpread
	numParts
)

const firstSpecPart = partVolumes

// The field numbers of the parts (k8s.io/api/core/v1/generated.proto and
// apimachinery's meta/v1/generated.proto), in partID order.
var (
	metaPartFields = []int32{11, 12, 13, 14}                  // labels .. finalizers
	specPartFields = []int32{1, 20, 2, 7, 14, 15, 18, 22, 33} // volumes .. topologySpreadConstraints
	managedFields  = int32(17)                                // ObjectMeta.managedFields
	podFields      = []int32{1, 2}                            // Pod.metadata, Pod.spec
	podSplit       = []int32{1, 2, 3}                         // Pod.metadata, Pod.spec, Pod.status

	// What decodePod splits off the metadata and the spec: the parts,
	// then the strings that repeat (protobuf_strings.go), then, for the
	// metadata, managedFields (last: left out when they are dropped).
	metaSplit = slices.Concat(metaPartFields, metaStrings, []int32{managedFields})
	specSplit = slices.Concat(specPartFields, specStrings)
)

// partSet is a set of partIDs.
type partSet uint32

func (s partSet) has(id partID) bool { return s&(1<<id) != 0 }

// partsCache maps the bytes of a part to its decoded value. It is used by
// one goroutine at a time and is not safe for concurrent use.
type partsCache struct {
	// table, when not nil, is the informer's share table: a part not in
	// the slots is looked up there by its bytes (Options.PodParts).
	table PodParts
	// strs, when not nil, is the strings table: the repeated strings of
	// what is decoded are taken from it (protobuf_strings.go).
	strs  *share.Table
	seed  maphash.Seed
	slots []partEntry // partSlots entries, allocated on first use
	next  []uint8     // per bucket, the way the next new part takes
	held  int         // bytes of raw held by the slots
	// misses counts, per part, its lookups in the slots that missed since
	// one found (keeps); skipped, its values not kept since one was.
	misses  [numParts]int
	skipped [numParts]uint8
}

type partEntry struct {
	id    partID
	raw   []byte // the part's bytes, whole fields: a copy
	value any    // what the format's decoder returned for raw
	// owner is the pod the part was decoded for, until the part is first
	// taken: by then the interning and sharing that ran on owner may have
	// put an equal value of their table's in its place (share.Table), and
	// that value is the one to hand on, not a second copy.
	owner *corev1.Pod
}

// find returns the value kept for (id, raw).
func (c *partsCache) find(id partID, raw []byte) (any, bool) {
	if c.slots == nil || len(raw) > partMaxBytes { // never kept
		return nil, false
	}
	b := c.bucket(id, raw)
	for i := range b {
		if e := &b[i]; e.id == id && e.raw != nil && bytes.Equal(e.raw, raw) {
			c.misses[id] = 0
			if e.owner != nil {
				e.value, e.owner = partOf(e.owner, id), nil
			}
			return e.value, true
		}
	}
	c.misses[id]++
	return nil, false
}

// keeps says whether a part the slots missed, and that was decoded, is
// kept in the slots. Pods in template order find their parts in the
// slots: the first pod of a template keeps what it decoded, and the next
// ones find it. A part that is each pod's own (annotations stamped per
// write) is never found again, in any order: keeping its values would
// only copy their bytes and push out values that do repeat. So past
// partMissRun misses in a row of one part, one value of it in partSample
// is kept, so that values that repeat again are seen (the next pods find
// the one kept). The count is per part: the parts every pod shares (a
// security context) are found, and that says nothing of annotations.
//
// A part found in the share table is not kept in the slots at all: the
// table keeps the bytes it found a value by, and finds it again by them
// at about the slots' cost (a lock, a map lookup, and for a map of labels
// its entries looked up), while a copy in the slots costs its bytes and
// pushes out another part. In random order (a churn over a thousand
// templates) each copy would be pushed out unread.
func (c *partsCache) keeps(id partID) bool {
	if c.misses[id] < partMissRun {
		return true
	}
	c.skipped[id]++
	return c.skipped[id]%partSample == 0
}

// take returns the value of part id whose bytes are raw, for p: the one
// kept for equal bytes (hit), else what decode makes of raw, which it
// keeps as p's (when keeps says so). decode is the format's: the cache
// holds the parts of one decoder, so of one format.
func (c *partsCache) take(id partID, raw []byte, p *corev1.Pod, decode func(partID, []byte) (any, error)) (v any, hit bool, err error) {
	if v, ok := c.find(id, raw); ok {
		return v, true, nil
	}
	if v, err = decode(id, raw); err != nil {
		return nil, false, err
	}
	if c.keeps(id) {
		c.keep(id, raw, v, p)
	}
	return v, false, nil
}

// keep remembers v, owner's part, as the value of (id, raw), in the slot
// of its bucket filled longest ago, when raw fits the limits.
func (c *partsCache) keep(id partID, raw []byte, v any, owner *corev1.Pod) {
	if len(raw) > partMaxBytes {
		return
	}
	if c.slots == nil {
		c.seed, c.slots, c.next = maphash.MakeSeed(), make([]partEntry, partSlots), make([]uint8, partSlots/partWays)
	}
	h := c.hash(id, raw)
	way := c.next[h]
	old := &c.slots[int(h)*partWays+int(way)]
	if c.held-len(old.raw)+len(raw) > partBudget {
		return
	}
	c.held += len(raw) - len(old.raw)
	*old = partEntry{id: id, raw: bytes.Clone(raw), value: v, owner: owner}
	c.next[h] = (way + 1) % partWays
}

// disown forgets p as the owner of the parts it was decoded for: p is
// about to be decoded again, whole, and its fields are no longer the parts
// the cache kept.
func (c *partsCache) disown(p *corev1.Pod) {
	for i := range c.slots {
		if c.slots[i].owner == p {
			c.slots[i].owner = nil
		}
	}
}

// disownAll forgets every owner: the pods they point to are about to be
// moved (a list's items grow), and the values kept for their parts stay
// valid, as after disown.
func (c *partsCache) disownAll() {
	for i := range c.slots {
		c.slots[i].owner = nil
	}
}

func (c *partsCache) hash(id partID, raw []byte) uint64 {
	return (maphash.Bytes(c.seed, raw) + uint64(id)) & (partSlots/partWays - 1)
}

func (c *partsCache) bucket(id partID, raw []byte) []partEntry {
	h := c.hash(id, raw)
	return c.slots[h*partWays : (h+1)*partWays]
}

// decodePod decodes raw, a pod's protobuf bytes, into p (a zero Pod),
// taking from the cache the parts it holds and keeping the others. It
// returns the parts p took from the cache, which p shares with other pods.
// drop skips managedFields. false: the bytes are not the usual shape (or
// do not decode), p is partly filled, and the caller decodes raw afresh.
func (c *partsCache) decodePod(raw []byte, p *corev1.Pod, drop bool) (partSet, bool) {
	var top [3]span
	if !splitMessage(p, raw, podSplit, 0, top[:]) {
		return 0, false
	}
	if !decodeStatus(p, top[2].of(raw), c.strs) {
		return 0, false
	}
	var hits partSet
	var spans [16]span // the larger of metaSplit and specSplit
	if top[0].end > 0 {
		meta, ok := singleMessage(top[0].of(raw))
		nums, dropNum := metaSplit, int32(0)
		if drop {
			nums, dropNum = metaSplit[:len(metaSplit)-1], managedFields
		}
		if !ok || !splitMessage(&p.ObjectMeta, meta, nums, dropNum, spans[:len(nums)]) {
			return 0, false
		}
		if !drop {
			presizeManagedFields(&p.ObjectMeta, spans[len(nums)-1])
		}
		h, ok := c.parts(p, meta, spans[:len(metaPartFields)], 0)
		if !ok || !c.strings(p, meta, spans[len(metaPartFields):len(metaPartFields)+len(metaStrings)], metaString) {
			return 0, false
		}
		if !drop && !managedFieldsEntries(&p.ObjectMeta, spans[len(nums)-1].of(meta), c.strs, c.table) {
			return 0, false
		}
		hits |= h
	}
	if top[1].end > 0 {
		spec, ok := singleMessage(top[1].of(raw))
		if !ok || !splitMessage(&p.Spec, spec, specSplit, 0, spans[:len(specSplit)]) {
			return 0, false
		}
		h, ok := c.parts(p, spec, spans[:len(specPartFields)], firstSpecPart)
		if !ok || !c.strings(p, spec, spans[len(specPartFields):len(specSplit)], specString) {
			return 0, false
		}
		hits |= h
	}
	return hits, true
}

// strings sets p's strings from the spans of msg through set, each the
// strings table's copy (protobuf_strings.go).
func (c *partsCache) strings(p *corev1.Pod, msg []byte, spans []span, set func(*corev1.Pod, int, string)) bool {
	return spanStrings(msg, spans, func(i int, v []byte) { set(p, i, c.strs.StringOf(v)) })
}

// parts sets p's parts first, first+1, ... from the spans of msg.
func (c *partsCache) parts(p *corev1.Pod, msg []byte, spans []span, first partID) (partSet, bool) {
	var hits partSet
	for i, s := range spans {
		if s.end == 0 {
			continue
		}
		id, raw := first+partID(i), s.of(msg)
		if v, ok := c.find(id, raw); ok {
			hits |= 1 << id
			setPart(p, id, v)
			continue
		}
		if c.table != nil && c.table.FindPodPart(partPath(id), raw, p) {
			// Not kept in the slots too: the table finds it again by its
			// bytes at about their cost (keeps says why).
			hits |= 1 << id
			continue
		}
		v, err := decodePart(id, raw, c.strs)
		if err != nil {
			return 0, false
		}
		if c.keeps(id) {
			c.keep(id, raw, v, p)
		}
		setPart(p, id, v)
	}
	return hits, true
}

// partPath names part id by its field numbers from the Pod message down
// (PodParts.FindPodPart): metadata is the Pod's field 1, spec field 2.
func partPath(id partID) [2]int32 {
	if id < firstSpecPart {
		return [2]int32{podFields[0], metaPartFields[id]}
	}
	return [2]int32{podFields[1], specPartFields[id-firstSpecPart]}
}

// decodePart decodes one part's bytes with its parent's generated
// Unmarshal, or, for a map of strings, as it does but with the strings
// taken from strs (protobuf_strings.go).
func decodePart(id partID, raw []byte, strs *share.Table) (any, error) {
	switch id {
	case partLabels, partAnnotations, partNodeSelector:
		if m, ok := decodeStringMap(raw, strs); ok {
			return m, nil
		}
	}
	var p corev1.Pod
	presizePart(&p, id, raw)
	var err error
	if id < firstSpecPart {
		err = p.ObjectMeta.Unmarshal(raw)
	} else {
		err = p.Spec.Unmarshal(raw)
	}
	return partOf(&p, id), err
}

// partOf returns p's part id.
func partOf(p *corev1.Pod, id partID) any {
	m, s := &p.ObjectMeta, &p.Spec
	switch id {
	case partLabels:
		return m.Labels
	case partAnnotations:
		return m.Annotations
	case partOwnerReferences:
		return m.OwnerReferences
	case partFinalizers:
		return m.Finalizers
	case partVolumes:
		return s.Volumes
	case partInitContainers:
		return s.InitContainers
	case partContainers:
		return s.Containers
	case partNodeSelector:
		return s.NodeSelector
	case partSecurityContext:
		return s.SecurityContext
	case partImagePullSecrets:
		return s.ImagePullSecrets
	case partAffinity:
		return s.Affinity
	case partTolerations:
		return s.Tolerations
	case partTopologySpread:
		return s.TopologySpreadConstraints
	}
	return nil
}

// setPart sets p's part id to v, a value partOf returned for that part.
func setPart(p *corev1.Pod, id partID, v any) {
	m, s := &p.ObjectMeta, &p.Spec
	switch id {
	case partLabels:
		m.Labels, _ = v.(map[string]string)
	case partAnnotations:
		m.Annotations, _ = v.(map[string]string)
	case partOwnerReferences:
		m.OwnerReferences, _ = v.([]metav1.OwnerReference)
	case partFinalizers:
		m.Finalizers, _ = v.([]string)
	case partVolumes:
		s.Volumes, _ = v.([]corev1.Volume)
	case partInitContainers:
		s.InitContainers, _ = v.([]corev1.Container)
	case partContainers:
		s.Containers, _ = v.([]corev1.Container)
	case partNodeSelector:
		s.NodeSelector, _ = v.(map[string]string)
	case partSecurityContext:
		s.SecurityContext, _ = v.(*corev1.PodSecurityContext)
	case partImagePullSecrets:
		s.ImagePullSecrets, _ = v.([]corev1.LocalObjectReference)
	case partAffinity:
		s.Affinity, _ = v.(*corev1.Affinity)
	case partTolerations:
		s.Tolerations, _ = v.([]corev1.Toleration)
	case partTopologySpread:
		s.TopologySpreadConstraints, _ = v.([]corev1.TopologySpreadConstraint)
	}
}

// noParts is a pod without parts, never written: what hideParts puts in
// place of the parts it hides.
var noParts corev1.Pod

// hideParts clears the parts of p in hits and returns a pod holding them,
// so that code that rewrites a fresh object in place (interning, sharing)
// leaves alone what p shares with other pods; showParts puts them back.
func hideParts(p *corev1.Pod, hits partSet) (saved corev1.Pod) {
	saved.ObjectMeta, saved.Spec = p.ObjectMeta, p.Spec
	for id := range numParts {
		if hits.has(id) {
			movePart(p, &noParts, id)
		}
	}
	return saved
}

// showParts undoes hideParts.
func showParts(p *corev1.Pod, hits partSet, saved *corev1.Pod) {
	for id := range numParts {
		if hits.has(id) {
			movePart(p, saved, id)
		}
	}
}

// movePart sets dst's part id to src's, without boxing it.
func movePart(dst, src *corev1.Pod, id partID) {
	dm, ds, sm, ss := &dst.ObjectMeta, &dst.Spec, &src.ObjectMeta, &src.Spec
	switch id {
	case partLabels:
		dm.Labels = sm.Labels
	case partAnnotations:
		dm.Annotations = sm.Annotations
	case partOwnerReferences:
		dm.OwnerReferences = sm.OwnerReferences
	case partFinalizers:
		dm.Finalizers = sm.Finalizers
	case partVolumes:
		ds.Volumes = ss.Volumes
	case partInitContainers:
		ds.InitContainers = ss.InitContainers
	case partContainers:
		ds.Containers = ss.Containers
	case partNodeSelector:
		ds.NodeSelector = ss.NodeSelector
	case partSecurityContext:
		ds.SecurityContext = ss.SecurityContext
	case partImagePullSecrets:
		ds.ImagePullSecrets = ss.ImagePullSecrets
	case partAffinity:
		ds.Affinity = ss.Affinity
	case partTolerations:
		ds.Tolerations = ss.Tolerations
	case partTopologySpread:
		ds.TopologySpreadConstraints = ss.TopologySpreadConstraints
	}
}
