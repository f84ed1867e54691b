package share

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

const (
	slots    = 2048 // a power of two
	ways     = 4    // slots per bucket
	maxBytes = 4096 // the largest rendering a slot keeps: at most 8 MiB in all
)

// Table holds one copy of each recently seen value, by content. It is safe
// for concurrent use. The zero value is ready to use.
type Table struct {
	mu    sync.Mutex // guards everything below
	seed  maphash.Seed
	slot  []entry // slots entries, allocated on first use
	next  []uint8 // per bucket, the way the next new value takes
	key   []byte  // scratch for renderings
	ready bool
}

// entry is one kept value and the rendering it was found by. A byte slice
// is its own rendering, so raw is set and key is empty.
type entry struct {
	key   string
	raw   []byte
	value any
}

// Objects returns transform composed with sharing: the object transform
// returns has its repeated maps and byte slices replaced by the table's
// copies. transform may be nil.
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

// Share rewrites obj's repeated values in place. obj must be the caller's
// alone: freshly decoded, not yet seen by anyone else.
func (t *Table) Share(obj runtime.Object) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.ready {
		t.seed, t.slot, t.ready = maphash.MakeSeed(), make([]entry, slots), true
		t.next = make([]uint8, slots/ways)
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		t.meta(&o.ObjectMeta)
		t.podSpec(&o.Spec)
	case *metav1.PartialObjectMetadata:
		t.meta(&o.ObjectMeta)
	case metav1.ObjectMetaAccessor:
		if m, ok := o.GetObjectMeta().(*metav1.ObjectMeta); ok {
			t.meta(m)
		}
	}
}

// find returns the kept value rendered as t.key, or keeps v under a copy
// of t.key and returns it. Callers hold mu.
func (t *Table) find(kind byte, v any) any {
	if len(t.key) > maxBytes {
		return v
	}
	t.key = append(t.key, kind)
	bucket, b := t.bucket(t.key)
	for i := range bucket {
		if bucket[i].raw == nil && bucket[i].key == string(t.key) {
			return bucket[i].value
		}
	}
	t.keep(bucket, b, entry{key: string(t.key), value: v})
	return v
}

// bytes returns the kept slice equal to raw, or keeps raw.
func (t *Table) bytes(raw []byte) []byte {
	if len(raw) > maxBytes {
		return raw
	}
	bucket, b := t.bucket(raw)
	for i := range bucket {
		if bucket[i].raw != nil && bytes.Equal(bucket[i].raw, raw) {
			return bucket[i].raw
		}
	}
	t.keep(bucket, b, entry{raw: raw})
	return raw
}

func (t *Table) bucket(key []byte) ([]entry, uint64) {
	b := maphash.Bytes(t.seed, key) & (slots/ways - 1)
	return t.slot[b*ways : (b+1)*ways], b
}

// keep puts e in the slot of its bucket that was filled longest ago.
func (t *Table) keep(bucket []entry, b uint64, e entry) {
	bucket[t.next[b]] = e
	t.next[b] = (t.next[b] + 1) % ways
}

func (t *Table) meta(m *metav1.ObjectMeta) {
	m.Labels = t.stringMap(m.Labels)
	m.Annotations = t.stringMap(m.Annotations)
	for i := range m.ManagedFields {
		f := m.ManagedFields[i].FieldsV1
		if f == nil || len(f.Raw) == 0 {
			continue
		}
		f.Raw = t.bytes(f.Raw)
	}
}

func (t *Table) stringMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	t.key = t.key[:0]
	for _, k := range keys {
		t.key = append(append(append(append(t.key, k...), 0), m[k]...), 0)
	}
	return t.find('m', m).(map[string]string)
}

func (t *Table) podSpec(s *corev1.PodSpec) {
	// Pods of one template have equal containers, volumes and
	// tolerations: the whole slice is shared. A slice seen for the first
	// time still shares its resource lists with other templates'.
	before := s.Containers
	s.Containers = sharedSlice(t, 'c', s.Containers)
	if len(before) == 0 || &before[0] == &s.Containers[0] {
		for _, cs := range [][]corev1.Container{s.InitContainers, s.Containers} {
			for i := range cs {
				r := &cs[i].Resources
				r.Requests = t.resourceList(r.Requests)
				r.Limits = t.resourceList(r.Limits)
			}
		}
	}
	s.Volumes = sharedSlice(t, 'v', s.Volumes)
	s.Tolerations = sharedSlice(t, 't', s.Tolerations)
	s.NodeSelector = t.stringMap(s.NodeSelector)
}

// message is a generated API type's protobuf form.
type message interface {
	Size() int
	MarshalToSizedBuffer([]byte) (int, error)
}

// sharedSlice shares a whole slice of generated API structs, rendered by
// their protobuf bytes: the API's own notion of equal values (a nil and an
// empty list inside an element are the same to it, as on the wire).
func sharedSlice[E any, P interface {
	*E
	message
}](t *Table, kind byte, s []E) []E {
	if len(s) == 0 {
		return s
	}
	t.key = t.key[:0]
	for i := range s {
		m := P(&s[i])
		n := m.Size()
		if len(t.key)+n > maxBytes {
			return s
		}
		start := len(t.key)
		t.key = slices.Grow(t.key, n+binary.MaxVarintLen64)[:start+n]
		if _, err := m.MarshalToSizedBuffer(t.key[start:]); err != nil {
			return s
		}
		t.key = binary.AppendUvarint(t.key, uint64(n))
	}
	return t.find(kind, s).([]E)
}

// resourceList renders each quantity with its canonical String and its
// format, which is everything a reader of a Quantity can observe.
func (t *Table) resourceList(l corev1.ResourceList) corev1.ResourceList {
	if len(l) == 0 {
		return l
	}
	names := make([]string, 0, len(l))
	for n := range l {
		names = append(names, string(n))
	}
	slices.Sort(names)
	t.key = t.key[:0]
	for _, n := range names {
		q := l[corev1.ResourceName(n)]
		t.key = append(append(t.key, n...), 0)
		t.key = append(append(t.key, quantityText(&q)...), 0)
		t.key = append(append(t.key, q.Format...), 0)
	}
	return t.find('r', l).(corev1.ResourceList)
}

// quantityText is q's canonical form; String caches it in the copy it is
// called on, never in the map.
func quantityText(q *resource.Quantity) string { return q.String() }
