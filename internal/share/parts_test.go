package share

import (
	"encoding/binary"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer/internal/realpod"
)

// wireContainers is what an API server sends of p's containers: the
// occurrences of PodSpec's field 2, keys included.
func wireContainers(t *testing.T, p *corev1.Pod) []byte {
	return wireField(t, &corev1.PodSpec{Containers: p.Spec.Containers}, 2)
}

// wireField returns the occurrences of field num in m's protobuf bytes
// (the generated Marshal writes every string field, empty or not, and
// writes a repeated field's elements together).
func wireField(t *testing.T, m interface{ Marshal() ([]byte, error) }, num uint64) []byte {
	msg, err := m.Marshal()
	require.NoError(t, err)
	var out []byte
	for off := 0; off < len(msg); {
		key, k := binary.Uvarint(msg[off:])
		require.Positive(t, k)
		n := k
		switch key & 7 {
		case 0:
			_, m := binary.Uvarint(msg[off+k:])
			n += m
		case 2:
			l, m := binary.Uvarint(msg[off+k:])
			n += m + int(l)
		default:
			t.Fatalf("wire type %d", key&7)
		}
		if key>>3 == num {
			out = append(out, msg[off:off+n]...)
		}
		off += n
	}
	return out
}

// A part is found by the bytes the server sends of it, as the value Share
// kept, and only by those bytes.
func TestFindPartTakesTheKeptValueOfTheseBytes(t *testing.T) {
	var tbl Table
	p := decoded(&tbl, realpod.New(0))
	tbl.Share(p)

	var q corev1.Pod
	require.True(t, tbl.FindPart(Containers, wireContainers(t, p), &q))
	assert.Same(t, &p.Spec.Containers[0], &q.Spec.Containers[0], "the kept slice itself")
	assert.Equal(t, len(q.Spec.Containers), cap(q.Spec.Containers), "no room to append into the kept array")

	secCtx := wireField(t, &corev1.PodSpec{SecurityContext: p.Spec.SecurityContext}, 14)
	require.True(t, tbl.FindPart(SecurityContext, secCtx, &q))
	assert.Same(t, p.Spec.SecurityContext, q.Spec.SecurityContext)

	other := realpod.Mixed(0) // a template of its own: another image
	var r corev1.Pod
	assert.False(t, tbl.FindPart(Containers, wireContainers(t, other), &r), "bytes nothing was kept for")
	assert.False(t, tbl.FindPart(InitContainers, wireContainers(t, p), &r), "another part's bytes")
	assert.False(t, tbl.FindPart(NoPart, wireContainers(t, p), &r))
	assert.False(t, (*Table)(nil).FindPart(Containers, wireContainers(t, p), &r))
	assert.Nil(t, r.Spec.Containers, "a pod that found nothing is left as it was")
}

// A server that sends other bytes under a kept value's hash (the hash is
// seeded: here the collision is forced) is not given the kept value: it is
// compared in full.
func TestFindPartUnderACollidingHashSharesNothing(t *testing.T) {
	var tbl Table
	p := decoded(&tbl, realpod.New(0))
	tbl.Share(p)
	kept := wireContainers(t, p)
	hostile := wireContainers(t, realpod.Mixed(0))
	require.NotEqual(t, kept, hostile)

	tbl.lock()
	defer tbl.mu.Unlock()
	h := tbl.sliceHash(sliceContainers, kept)
	var q corev1.Pod
	assert.False(t, tbl.findPart(Containers, hostile, &q, h), "other bytes under the kept value's hash")
	assert.Nil(t, q.Spec.Containers)
	require.True(t, tbl.findPart(Containers, kept, &q, h), "the kept value's own bytes under its hash")
	assert.Same(t, &p.Spec.Containers[0], &q.Spec.Containers[0])
}

// A kept part that no pod holds any more is collected: it is not found,
// and the next pod of its template keeps its own.
func TestFindPartDoesNotFindACollectedPart(t *testing.T) {
	var tbl Table
	raw := wireContainers(t, realpod.New(0))
	func() {
		p := decoded(&tbl, realpod.New(0))
		tbl.Share(p)
		var q corev1.Pod
		require.True(t, tbl.FindPart(Containers, raw, &q))
	}()
	require.Eventually(t, func() bool {
		goruntime.GC()
		var q corev1.Pod
		return !tbl.FindPart(Containers, raw, &q)
	}, 10*time.Second, time.Millisecond, "collected once no pod holds it")

	p := decoded(&tbl, realpod.New(1))
	tbl.Share(p)
	var q corev1.Pod
	require.True(t, tbl.FindPart(Containers, raw, &q), "kept again")
	assert.Same(t, &p.Spec.Containers[0], &q.Spec.Containers[0])
}

// A pod's labels are found by their entries as the server sends them,
// and only a map with exactly those entries is taken: not under another
// map's hash (forced here), and not from bytes that repeat a key so as to
// count as many entries as the kept map.
func TestFindPartTakesOnlyAMapWithTheseEntries(t *testing.T) {
	var tbl Table
	p := decoded(&tbl, realpod.New(0))
	p.Labels = map[string]string{"app": "shop", "tier": "web"}
	tbl.Share(p)
	raw := wireField(t, &p.ObjectMeta, 11)

	var q corev1.Pod
	require.True(t, tbl.FindPart(Labels, raw, &q))
	assert.Equal(t, mapID(p.Labels), mapID(q.Labels), "the kept map itself")
	assert.False(t, tbl.FindPart(NodeSelector, wireField(t, &corev1.PodSpec{NodeSelector: map[string]string{"app": "shop"}}, 7), &q))

	tbl.lock()
	defer tbl.mu.Unlock()
	h, ok := tbl.mapHash(raw)
	require.True(t, ok)
	var r corev1.Pod
	other := wireField(t, &metav1.ObjectMeta{Labels: map[string]string{"app": "shop", "tier": "db"}}, 11)
	assert.False(t, tbl.findPart(Labels, other, &r, h), "other entries under the kept map's hash")
	one := wireField(t, &metav1.ObjectMeta{Labels: map[string]string{"app": "shop"}}, 11)
	assert.False(t, tbl.findPart(Labels, one, &r, h), "some of the kept map's entries")
	twice := append(append([]byte(nil), one...), one...)
	assert.False(t, tbl.findPart(Labels, twice, &r, h), "one entry twice, as many as the kept map's")
	_, ok = tbl.mapHash(twice)
	assert.False(t, ok, "a key twice is not as the generated Marshal writes a map")
	assert.Nil(t, r.Labels)
	require.True(t, tbl.findPart(Labels, raw, &r, h))
}

// TestFindPodPartNamesEachPartByItsFieldNumbers checks the paths
// reflector/wire names parts by against the generated Pod's field
// numbers: a pod's containers sent as spec's field 2 are found under
// {2, 2} and under no other path.
func TestFindPodPartNamesEachPartByItsFieldNumbers(t *testing.T) {
	want := map[[2]int32]Part{
		{1, 11}: Labels, {1, 13}: OwnerReferences,
		{2, 1}: Volumes, {2, 2}: Containers, {2, 7}: NodeSelector, {2, 14}: SecurityContext,
		{2, 18}: Affinity, {2, 20}: InitContainers, {2, 22}: Tolerations,
	}
	for path, part := range want {
		assert.Equal(t, part, partAt(path), "path %v", path)
	}
	assert.Equal(t, NoPart, partAt([2]int32{2, 3}), "spec.restartPolicy is no part")
	assert.Equal(t, NoPart, partAt([2]int32{1, 2}), "metadata.generateName is no part")

	var tbl Table
	p := decoded(&tbl, realpod.New(0))
	tbl.Share(p)
	raw := wireContainers(t, p)
	var q corev1.Pod
	assert.False(t, tbl.FindPodPart([2]int32{2, 20}, raw, &q), "found under init containers")
	require.True(t, tbl.FindPodPart([2]int32{2, 2}, raw, &q))
	assert.Same(t, &p.Spec.Containers[0], &q.Spec.Containers[0])
}

// The first time a value is found by its bytes, its entry keeps them (and
// charges them to the budget), and it is found from then on by comparing
// bytes with those, in full: bytes that differ from them in one byte, under
// the same hash (forced here), find nothing, and Share still finds the
// value for an equal slice. A value that was never found so keeps none.
func TestFindPartKeepsTheBytesItFoundAValueBy(t *testing.T) {
	var tbl Table
	p := decoded(&tbl, realpod.New(0))
	tbl.Share(p)
	raw := wireContainers(t, p)
	h := tbl.sliceHash(sliceContainers, raw)
	tbl.lock()
	assert.NotContains(t, tbl.raws, h, "kept by Share alone: no bytes")
	tbl.mu.Unlock()

	before := tbl.Stats().Bytes
	var q corev1.Pod
	require.True(t, tbl.FindPart(Containers, raw, &q))
	assert.Equal(t, before+int(costUnits(len(raw)+rawOverhead))*costUnit, tbl.Stats().Bytes, "the bytes are charged")
	tbl.lock()
	kept := tbl.raws[h]
	tbl.mu.Unlock()
	require.Equal(t, raw, kept, "the bytes it was found by")
	assert.NotSame(t, &raw[0], &kept[0], "a copy: the caller's buffer is reused")

	var r corev1.Pod
	require.True(t, tbl.FindPart(Containers, raw, &r), "found again, by its bytes")
	assert.Same(t, &p.Spec.Containers[0], &r.Spec.Containers[0])
	assert.Equal(t, before+int(costUnits(len(raw)+rawOverhead))*costUnit, tbl.Stats().Bytes, "charged once")

	hostile := append([]byte(nil), raw...)
	hostile[len(hostile)-1] ^= 1
	tbl.lock()
	var s corev1.Pod
	assert.False(t, tbl.findPart(Containers, hostile, &s, h), "one byte off, under the kept value's hash")
	tbl.mu.Unlock()
	assert.Nil(t, s.Spec.Containers)

	twin := decoded(&tbl, realpod.New(1)) // the same template
	tbl.Share(twin)
	assert.Same(t, &p.Spec.Containers[0], &twin.Spec.Containers[0], "Share compares with the kept bytes too")

	// Labels too: found by their entries once, then by those bytes.
	labels := wireField(t, &p.ObjectMeta, 11)
	require.True(t, tbl.FindPart(Labels, labels, &q))
	tbl.lock()
	lh, ok := tbl.mapHash(labels)
	require.True(t, ok)
	assert.Equal(t, labels, tbl.raws[lh])
	tbl.mu.Unlock()
	var u corev1.Pod
	require.True(t, tbl.FindPart(Labels, labels, &u))
	assert.Equal(t, mapID(p.Labels), mapID(u.Labels))
}
