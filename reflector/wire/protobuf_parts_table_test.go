package wire

import (
	"bytes"
	goruntime "runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer/internal/realpod"
	"github.com/seed31a95821/informer/internal/reuse"
	"github.com/seed31a95821/informer/internal/share"
	"github.com/seed31a95821/informer/rest"
)

// tableDecoding decodes watch streams of realpod.Mixed's pods as an
// informer does when its decoders share parts: a parts cache per stream,
// one share table for them all (Options.PodParts), interning and
// sharing after each pod.
type tableDecoding struct {
	tgt   *target
	table *share.Table
}

func newTableDecoding(t *testing.T) *tableDecoding {
	tgt, err := newTarget(NewScheme(), podsResource.Kind, false)
	require.NoError(t, err)
	tgt.strings = &share.Table{Budget: share.StringsBudget}
	d := &tableDecoding{tgt: tgt, table: new(share.Table)}
	tgt.parts = d.table
	return d
}

// stream decodes pods order (indexes into realpod.Mixed) through one
// watch stream, checks each against the generated Unmarshal of its bytes,
// and returns them by index. hits counts the pods that took their
// containers from the parts cache or the table.
func (d *tableDecoding) stream(t *testing.T, n int, order []int) (pods []*corev1.Pod, hits int) {
	enc := newWireEncoder(rest.ContentTypeProtobuf)
	var stream []byte
	for _, i := range order {
		stream = append(stream, enc.frame(t, watch.Modified, mixedPod(i))...)
	}
	c := reuse.New(func(string) (runtime.Object, bool) { return nil, false }, nil)
	lw := &ListerWatcher{opts: Options{Relist: c, Decoded: d.table.Share, ShareParts: true}}
	pd := newProtobufEventDecoder(bytes.NewReader(stream), rest.DefaultMaxFrameBytes, d.tgt)
	pd.objects = newProtoDecoder(d.tgt, lw.shareParts())
	dec := lw.reuseWatch(metav1.ListOptions{}, pd)
	pods = make([]*corev1.Pod, n)
	for _, i := range order {
		ev, err := dec.Next()
		require.NoError(t, err)
		got := ev.Object.(*corev1.Pod)
		want, err := generated(marshalPod(t, mixedPod(i)), false)
		require.NoError(t, err)
		want.APIVersion, want.Kind = "v1", "Pod"
		require.True(t, apiequality.Semantic.DeepEqual(want, got), "pod %d", i)
		if pd.lastHits.has(partContainers) {
			hits++
		}
		pods[i] = got
	}
	return pods, hits
}

func mixedPod(i int) *corev1.Pod {
	p := realpod.Mixed(i)
	p.ResourceVersion = strconv.Itoa(100 + i)
	return p
}

// Pods in random order, three in ten of a template of their own
// (realpod.Mixed), decode as the generated Unmarshal decodes their bytes
// when their parts come from the informer's share table; the pods of one
// template hold one copy of its containers, whatever the order and in
// whichever stream they came; and a part no pod holds any more is
// collected, and decoded afresh by the next pod that carries it.
func TestPartsFromTheShareTableDecodeAsTheGeneratedUnmarshal(t *testing.T) {
	n := 600
	if testing.Short() {
		n = 200
	}
	d := newTableDecoding(t)
	first, _ := d.stream(t, n, realpod.ChurnOrder(n, 1))
	second, hits := d.stream(t, n, realpod.ChurnOrder(n, 2))
	assert.Equal(t, n, hits, "every pod of the second stream finds its containers kept")

	// One copy of each template's containers, and of the security
	// context every template has alike.
	copies := map[string]*corev1.Container{}
	for _, pods := range [][]*corev1.Pod{first, second} {
		for i, p := range pods {
			key := string(marshalMsg(t, &corev1.PodSpec{Containers: p.Spec.Containers}))
			if c, ok := copies[key]; ok {
				require.Same(t, c, &p.Spec.Containers[0], "pod %d holds a copy of its own", i)
			} else {
				copies[key] = &p.Spec.Containers[0]
			}
			require.Same(t, first[0].Spec.SecurityContext, p.Spec.SecurityContext, "pod %d", i)
		}
	}

	// Nobody holds those pods any more: their parts are collected. (The
	// generated Marshal writes a PodSpec's containers, field 2, first.)
	spec := marshalMsg(t, &corev1.PodSpec{Containers: first[0].Spec.Containers})
	raw := spec[:len(spec)-len(marshalMsg(t, &corev1.PodSpec{}))]
	var p corev1.Pod
	require.True(t, d.table.FindPodPart([2]int32{2, 2}, raw, &p))
	first, second, copies, p = nil, nil, nil, corev1.Pod{}
	require.Eventually(t, func() bool {
		goruntime.GC()
		var p corev1.Pod
		return !d.table.FindPodPart([2]int32{2, 2}, raw, &p)
	}, 10*time.Second, time.Millisecond)
	d.stream(t, n, realpod.ChurnOrder(n, 3)) // checks each pod
}

// A part found in the share table is taken from it and not copied into
// the parts cache's slots: the table finds it again by its bytes. A part
// the table does not keep (annotations) is decoded and kept in the slots.
func TestPartsFoundInTheTableAreNotCopiedIntoTheCache(t *testing.T) {
	tbl := new(share.Table)
	first := realpod.New(0)
	tbl.Strings(first)
	tbl.Share(first)
	c := &partsCache{table: tbl}
	var got corev1.Pod
	raw := marshalPod(t, realpod.New(1)) // the same template
	hits, ok := c.decodePod(raw, &got, false)
	require.True(t, ok)
	require.True(t, hits.has(partContainers), "found in the table")
	assert.Same(t, &first.Spec.Containers[0], &got.Spec.Containers[0])
	annotations := false
	for _, e := range c.slots {
		if e.raw != nil {
			assert.False(t, hits.has(e.id), "part %d found in the table, and copied", e.id)
			annotations = annotations || e.id == partAnnotations
		}
	}
	assert.True(t, annotations, "annotations decoded and kept")
	want, err := generated(raw, false)
	require.NoError(t, err)
	assert.True(t, apiequality.Semantic.DeepEqual(want, &got))
}
