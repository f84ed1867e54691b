package wire

// Decode-time interning: the optimisation of this package's memory. Delete
// this file, the strings field of target and its two calls (in
// finishEventObject and decodeList), and the package is still correct, only
// larger: every decoded object then owns its own copy of every string.
//
// Why it pays: the objects of one resource repeat most of their strings.
// A cluster's pods share a handful of namespaces, node names, images,
// label keys and values, owner kinds, condition types and reasons,
// container and port names, managedFields managers; each decode allocates
// every one of them again, and the cache keeps them all. Replacing each
// such string, as soon as the object is decoded, by the one copy a small
// table holds lets the decoded copies die young and the cache hold one.
// BenchmarkListHeapPerPod (intern_test.go) measures it on realistic pods.
//
// It is safe because Go strings are immutable: objects that share a string
// cannot change it for each other, and a Transform that rewrites a field
// assigns a new string. Only strings are shared, never maps or slices,
// which a Transform may modify in place.
//
// The table is bounded in entries and in bytes: a fixed array of slots,
// each holding at most one string of at most internMaxLen bytes, in buckets
// of internWays slots chosen by the string's hash. A new string takes the
// slot of its bucket that was filled longest ago. So a server that sends
// only distinct values makes the table churn, never grow, and what it keeps
// alive is at most internSlots × internMaxLen bytes (1 MiB).

import (
	"hash/maphash"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

const (
	internSlots  = 4096 // a power of two
	internWays   = 4    // slots per bucket: a few values that collide can all stay
	internMaxLen = 256  // longer strings are rarely repeated and are kept as decoded
)

// internTable maps strings to one shared copy. It is safe for concurrent
// use; the list and the watch decoders of one ListerWatcher share one.
type internTable struct {
	seed maphash.Seed

	mu    sync.Mutex // guards slots and next; held for one whole object
	slots []string   // internSlots entries, allocated on first use
	next  []uint8    // per bucket, the way the next new string takes
}

func newInternTable() *internTable { return &internTable{seed: maphash.MakeSeed()} }

// intern replaces the repeated strings of a freshly decoded object by the
// table's copies. A nil table does nothing. Kinds other than the ones with
// a walker of their own get their metadata interned.
func (t *internTable) intern(obj runtime.Object) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.slots == nil {
		t.slots = make([]string, internSlots)
		t.next = make([]uint8, internSlots/internWays)
	}
	in := interner{t}
	switch o := obj.(type) {
	case *corev1.Pod:
		in.meta(&o.ObjectMeta)
		in.podSpec(&o.Spec)
		in.podStatus(&o.Status)
	case *metav1.PartialObjectMetadata:
		in.meta(&o.ObjectMeta)
	case metav1.ObjectMetaAccessor:
		if m, ok := o.GetObjectMeta().(*metav1.ObjectMeta); ok {
			in.meta(m)
		}
	}
}

// lookup returns the table's copy of s, or keeps s in its bucket when the
// bucket has none. Callers hold mu.
func (t *internTable) lookup(s string) string {
	if len(s) == 0 || len(s) > internMaxLen {
		return s
	}
	b := maphash.String(t.seed, s) & (internSlots/internWays - 1)
	bucket := t.slots[b*internWays : (b+1)*internWays]
	for _, c := range bucket {
		if c == s {
			return c
		}
	}
	bucket[t.next[b]] = s
	t.next[b] = (t.next[b] + 1) % internWays
	return s
}

// interner walks one object under the table's lock.
type interner struct{ t *internTable }

// str interns the string at p, whatever its named string type.
func str[S ~string](in interner, p *S) { *p = S(in.t.lookup(string(*p))) }

func strs(in interner, ss []string) {
	for i := range ss {
		str(in, &ss[i])
	}
}

// stringMap interns keys and values in place. Assigning to a key that is
// present replaces the stored key too, so the map keeps the shared copy.
func (in interner) stringMap(m map[string]string) {
	for k, v := range m {
		m[in.t.lookup(k)] = in.t.lookup(v)
	}
}

func (in interner) meta(m *metav1.ObjectMeta) {
	str(in, &m.Namespace)
	str(in, &m.GenerateName)
	in.stringMap(m.Labels)
	in.stringMap(m.Annotations)
	strs(in, m.Finalizers)
	for i := range m.OwnerReferences {
		r := &m.OwnerReferences[i]
		str(in, &r.APIVersion)
		str(in, &r.Kind)
		str(in, &r.Name)
		str(in, &r.UID)
	}
	for i := range m.ManagedFields {
		f := &m.ManagedFields[i]
		str(in, &f.Manager)
		str(in, &f.Operation)
		str(in, &f.APIVersion)
		str(in, &f.FieldsType)
		str(in, &f.Subresource)
	}
}
