package share

// How each kind of value is found in the table: a hash of its content,
// and an equality that decides. Nothing is kept but the value itself, so
// a value the cache holds costs the table only its entry.

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"maps"
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Kinds of value: each hash is salted with its kind, so that values of
// different Go types never collide by construction.
const (
	kindBytes uint64 = iota + 1
	kindStringMap
	kindBytesMap
	kindResources
	kindSlice // + a per-call-site number, see sharedSlice
)

// mapEntryOverhead estimates a map entry's heap bytes beside its content.
const mapEntryOverhead = 48

// mix is splitmix64's finalizer: a bijection in which every input bit
// flips about half the output bits. Sums and XORs of inputs that differ in
// a few bits then differ in random ones, as sums of real hashes do.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// salt mixes a kind and a length into a content hash.
func salt(h, kind uint64, n int) uint64 {
	return mix(h ^ mix(kind<<56|uint64(n)))
}

// pair hashes one map entry from its key's and its value's hashes; the
// entries of a map are summed, so that the map's hash does not depend on
// Go's iteration order and needs no sorting. Both are mixed first: a
// value's hash need not be random (a quantity's is its float's bits), and
// a sum of entries whose values differ in a few bits at the same places
// would otherwise cancel out at a rate of one seed in eight (issue 33:
// {cpu: 1, memory: 512Mi} and {cpu: 500m, memory: 256Mi}).
func pair(k, v uint64) uint64 {
	return mix(k ^ mix(v))
}

// bytes returns the kept slice equal to raw, or keeps raw.
func (t *Table) bytes(raw []byte) []byte {
	if len(raw) == 0 || len(raw) > maxValue {
		return raw
	}
	h := salt(maphash.Bytes(t.seed, raw), kindBytes, len(raw))
	return find[[]byte, sliceHolder[byte]](t, h, raw, len(raw), func(kept []byte) bool { return bytes.Equal(kept, raw) })
}

// FindBytes returns the kept byte slice equal to raw, or nil: what Share
// would put in place of a copy of raw (a managedFields entry's fieldsV1),
// for a decoder that has not copied raw yet. The slice is shared: the
// object that takes it must never be modified (doc.go, "Safe").
func (t *Table) FindBytes(raw []byte) []byte {
	if t == nil || len(raw) == 0 || len(raw) > maxValue {
		return nil
	}
	t.lock()
	defer t.mu.Unlock()
	e, ok := t.vals[salt(maphash.Bytes(t.seed, raw), kindBytes, len(raw))]
	if !ok {
		return nil
	}
	kept, ok := get[[]byte, sliceHolder[byte]](e)
	if !ok || !bytes.Equal(kept, raw) {
		return nil
	}
	return kept
}

// stringMap returns the kept map equal to m, or keeps m.
func (t *Table) stringMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	var h uint64
	cost := 0
	for k, v := range m {
		h += pair(maphash.String(t.seed, k), maphash.String(t.seed, v))
		cost += len(k) + len(v) + mapEntryOverhead
	}
	if cost > maxValue {
		return m
	}
	return find[map[string]string, mapHolder[map[string]string]](t, salt(h, kindStringMap, len(m)), m, cost,
		func(kept map[string]string) bool { return maps.Equal(kept, m) })
}

// bytesMap returns the kept map equal to m, or keeps m: a Secret's data
// or a ConfigMap's binaryData, compared byte for byte.
func (t *Table) bytesMap(m map[string][]byte) map[string][]byte {
	if len(m) == 0 {
		return m
	}
	var h uint64
	cost := 0
	for k, v := range m {
		h += pair(maphash.String(t.seed, k), maphash.Bytes(t.seed, v))
		cost += len(k) + len(v) + mapEntryOverhead
	}
	if cost > maxValue {
		return m
	}
	return find[map[string][]byte, mapHolder[map[string][]byte]](t, salt(h, kindBytesMap, len(m)), m, cost,
		func(kept map[string][]byte) bool { return maps.EqualFunc(kept, m, bytes.Equal) })
}

// resourceList returns the kept list equal to l, or keeps l. Two
// quantities are equal when their values and formats are: then their
// canonical forms, all a reader of a Quantity can observe, are too ("1Gi"
// and "1073741824" are not).
func (t *Table) resourceList(l corev1.ResourceList) corev1.ResourceList {
	if len(l) == 0 {
		return l
	}
	var h uint64
	for n, q := range l {
		v := math.Float64bits(q.AsApproximateFloat64()) ^ maphash.String(t.seed, string(q.Format))
		h += pair(maphash.String(t.seed, string(n)), v)
	}
	return find[corev1.ResourceList, mapHolder[corev1.ResourceList]](t, salt(h, kindResources, len(l)), l, len(l)*(64+mapEntryOverhead),
		func(kept corev1.ResourceList) bool { return sameResources(kept, l) })
}

func sameResources(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for n, q := range a {
		r, ok := b[n]
		if !ok || q.Format != r.Format || q.Cmp(r) != 0 {
			return false
		}
	}
	return true
}

// message is a generated API type's protobuf form.
type message interface {
	Size() int
	MarshalToSizedBuffer([]byte) (int, error)
}

// sharedSlice returns the kept slice of generated API structs equal to s,
// or keeps s. Slices are compared by their protobuf bytes, the API's own
// notion of equal values (a nil and an empty list inside an element are
// the same to it, as on the wire); kind tells one call site's slices from
// another's. It reports whether s was found kept.
//
// The bytes are the field's as its parent message holds it on the wire
// (render), so that a protobuf decoder finds the kept slice from the bytes
// it reads, without decoding them (FindPart).
func sharedSlice[E any, P interface {
	*E
	message
}](t *Table, kind uint64, s []E) ([]E, bool) {
	if len(s) == 0 {
		return s, false
	}
	var ok bool
	if t.key, ok = render[E, P](t.key[:0], kind, s); !ok {
		return s, false
	}
	key := t.key
	// A struct takes about twice its protobuf bytes on the heap.
	h := t.sliceHash(kind, key)
	got := find[[]E, sliceHolder[E]](t, h, s, 2*len(key), func(kept []E) bool {
		return rendersAs[E, P](t, kind, h, kept, key)
	})
	return got, len(got) > 0 && &got[0] != &s[0]
}

// sliceHash is where a slice of call site kind whose rendering is key is
// kept.
func (t *Table) sliceHash(kind uint64, key []byte) uint64 {
	return salt(maphash.Bytes(t.seed, key), kindSlice+kind, len(key))
}

// rendersAs reports whether kept, the slice of call site kind kept under
// h, renders as key, compared in full: with the rendering the table keeps
// for it (raws), else with one made now. Callers hold mu.
func rendersAs[E any, P interface {
	*E
	message
}](t *Table, kind, h uint64, kept []E, key []byte) bool {
	if raw, ok := t.raws[h]; ok {
		return bytes.Equal(raw, key)
	}
	var ok bool
	t.other, ok = render[E, P](t.other[:0], kind, kept)
	return ok && bytes.Equal(t.other, key)
}

// render appends the protobuf bytes of s as the field of call site kind
// in its parent message: for each element, the field's key, its length
// and its bytes, as the generated Marshal of the parent writes them (and
// so the API server). false when they would pass maxValue.
func render[E any, P interface {
	*E
	message
}](buf []byte, kind uint64, s []E) ([]byte, bool) {
	tag := fieldOf(kind)<<3 | 2 // length-delimited
	for i := range s {
		m := P(&s[i])
		n := m.Size()
		if len(buf)+n > maxValue {
			return buf, false
		}
		buf = binary.AppendUvarint(buf, tag)
		buf = binary.AppendUvarint(buf, uint64(n))
		start := len(buf)
		buf = slices.Grow(buf, n)[:start+n]
		if _, err := m.MarshalToSizedBuffer(buf[start:]); err != nil {
			return buf, false
		}
	}
	return buf, true
}
