package wire

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer/internal/realpod"
	"github.com/seed31a95821/informer/internal/reuse"
	"github.com/seed31a95821/informer/internal/share"
	"github.com/seed31a95821/informer/rest"
)

// partsPopulation is pods as a cluster holds them: realpod's deployments
// of ten replicas, three pods in ten with a template of their own, and a
// few with parts that only they have (an init container, an affinity, a
// finalizer, a label more), so that equal and different parts meet.
func partsPopulation(n int) []*corev1.Pod {
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		p := realpod.New(i)
		p.ResourceVersion = strconv.Itoa(100 + i)
		switch i % 10 {
		case 1:
			p.Spec.Containers[0].Image += "-" + strconv.Itoa(i)
		case 2:
			p.Labels["own"] = strconv.Itoa(i)
		case 3:
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox"}}
			p.Finalizers = []string{"example.com/hold"}
		case 4:
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1}}}}
			p.Spec.NodeSelector = map[string]string{"zone": "a"}
		}
		pods[i] = p
	}
	return pods
}

func marshalPod(t testing.TB, p *corev1.Pod) []byte {
	raw, err := p.Marshal()
	require.NoError(t, err)
	return raw
}

// generated is what the generated Unmarshal makes of raw.
func generated(raw []byte, drop bool) (*corev1.Pod, error) {
	var p corev1.Pod
	if err := p.Unmarshal(raw); err != nil {
		return nil, err
	}
	if drop {
		p.ManagedFields = nil
	}
	return &p, nil
}

// A pod decoded with parts taken from earlier pods equals the pod the
// generated Unmarshal decodes from the same bytes, managedFields dropped
// or not; and parts are taken (the test is not vacuous).
func TestPartsDecodeAsTheGeneratedUnmarshal(t *testing.T) {
	for _, drop := range []bool{false, true} {
		t.Run(fmt.Sprintf("drop=%v", drop), func(t *testing.T) {
			d := &protoDecoder{drop: drop, parts: &partsCache{strs: &share.Table{}}}
			var hits int
			for i, p := range partsPopulation(300) {
				raw := marshalPod(t, p)
				var got corev1.Pod
				h, err := d.decode(raw, &got)
				require.NoError(t, err)
				if h.has(partContainers) {
					hits++
				}
				want, err := generated(raw, drop)
				require.NoError(t, err)
				require.True(t, reflect.DeepEqual(want, &got), "pod %d differs", i)
			}
			assert.Greater(t, hits, 200, "pods of one template take their containers from the cache")
		})
	}
}

// Any bytes, cut or corrupted: the decoder succeeds exactly when the
// generated Unmarshal does, with the same pod, and fails with its error
// otherwise; the hostile bytes never make it panic. (With managedFields
// dropped, damage inside them is not seen: they are skipped unread.)
func TestPartsDecodeDamagedBytesAsTheGeneratedUnmarshal(t *testing.T) {
	pods := partsPopulation(20)
	rnd := rand.New(rand.NewPCG(1, 2))
	d := &protoDecoder{parts: &partsCache{strs: &share.Table{}}}
	check := func(raw []byte) {
		t.Helper()
		var got corev1.Pod
		_, err := d.decode(raw, &got)
		want, wantErr := generated(raw, false)
		if wantErr != nil {
			require.Error(t, err)
			assert.Equal(t, wantErr.Error(), err.Error())
			return
		}
		require.NoError(t, err)
		require.True(t, reflect.DeepEqual(want, &got))
	}
	for _, p := range pods {
		raw := marshalPod(t, p)
		check(raw) // fill the cache: damaged copies of these parts come next
		for cut := 0; cut < len(raw); cut += 1 + rnd.IntN(7) {
			check(raw[:cut])
		}
		for range 200 {
			damaged := bytes.Clone(raw)
			damaged[rnd.IntN(len(damaged))] = byte(rnd.Uint32())
			check(damaged)
		}
	}
}

// Bytes of a shape the API server does not write (a repeated field's
// elements apart, a message field sent twice) are decoded by the generated
// Unmarshal, with its merging rules.
func TestPartsOfUnusualShapeDecodeAsTheGeneratedUnmarshal(t *testing.T) {
	p := realpod.New(1)
	spec := marshalMsg(t, &p.Spec)
	two := &corev1.PodSpec{Containers: []corev1.Container{{Name: "late"}}, NodeName: "n2"}
	apart := append(append(bytes.Clone(spec), marshalMsg(t, &corev1.PodSpec{NodeName: "between"})...), marshalMsg(t, two)...)
	meta := marshalMsg(t, &p.ObjectMeta)
	cases := map[string][]byte{
		"containers apart": concat(field(1, meta), field(2, apart)),
		"spec twice":       concat(field(1, meta), field(2, spec), field(2, marshalMsg(t, two))),
		"metadata twice":   concat(field(1, meta), field(1, marshalMsg(t, &metav1.ObjectMeta{Labels: map[string]string{"x": "y"}}))),
		"unknown field":    concat(field(1, meta), field(99, []byte("future")), field(2, spec)),
	}
	for name, raw := range cases {
		t.Run(name, func(t *testing.T) {
			d := &protoDecoder{parts: new(partsCache)}
			var got corev1.Pod
			_, err := d.decode(raw, &got)
			require.NoError(t, err)
			want, err := generated(raw, false)
			require.NoError(t, err)
			assert.True(t, reflect.DeepEqual(want, &got))
		})
	}
}

type sizedMessage interface{ Marshal() ([]byte, error) }

func marshalMsg(t testing.TB, m sizedMessage) []byte {
	b, err := m.Marshal()
	require.NoError(t, err)
	return b
}

// field encodes a length-delimited field.
func field(num int, val []byte) []byte {
	b := appendVarint(nil, uint64(num)<<3|2)
	b = appendVarint(b, uint64(len(val)))
	return append(b, val...)
}

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// A list page decodes item by item as PodList's generated Unmarshal does,
// and its items take parts from each other.
func TestPartsDecodeListsAsTheGeneratedUnmarshal(t *testing.T) {
	tgt, err := newTarget(NewScheme(), podsResource.Kind, false)
	require.NoError(t, err)
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "7", Continue: "next"}}
	for _, p := range partsPopulation(50) {
		list.Items = append(list.Items, *p)
	}
	for _, l := range []*corev1.PodList{list, {ListMeta: list.ListMeta}} {
		raw := marshalMsg(t, l)
		got := &corev1.PodList{}
		hits, err := newProtoDecoder(tgt, true).decodeList(raw, got)
		require.NoError(t, err)
		var want corev1.PodList
		require.NoError(t, want.Unmarshal(raw))
		assert.True(t, reflect.DeepEqual(&want, got))
		assert.Len(t, hits, len(want.Items))
	}
}

// The informer's whole path, with the race detector as the judge: pods
// that share parts are delivered one by one while a reader walks every
// pod delivered so far, and the interning and sharing that run on each
// new pod (which rewrite a fresh pod in place) must not write to a part an
// earlier pod holds. Decoding with hideParts disabled makes -race fail
// here.
func TestSharedPartsAreNotWrittenAfterDelivery(t *testing.T) {
	tgt, err := newTarget(NewScheme(), podsResource.Kind, false)
	require.NoError(t, err)
	tgt.strings = &share.Table{Budget: share.StringsBudget}
	enc := newWireEncoder(rest.ContentTypeProtobuf)
	var stream []byte
	pods := partsPopulation(200)
	for _, p := range pods {
		stream = append(stream, enc.frame(t, watch.Modified, p)...)
	}
	c := reuse.New(func(string) (runtime.Object, bool) { return nil, false }, nil)
	table := new(share.Table) // parts are found in it too (Options.PodParts)
	tgt.parts = table
	lw := &ListerWatcher{opts: Options{Relist: c, Decoded: table.Share, ShareParts: true}}
	require.True(t, lw.shareParts())
	pd := newProtobufEventDecoder(bytes.NewReader(stream), rest.DefaultMaxFrameBytes, tgt)
	pd.objects = newProtoDecoder(tgt, lw.shareParts())
	dec := lw.reuseWatch(metav1.ListOptions{}, pd)

	delivered := make(chan *corev1.Pod)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var seen []*corev1.Pod
		for p := range delivered {
			seen = append(seen, p)
			for _, q := range seen { // reads every part of every pod
				_, err := q.Marshal()
				assert.NoError(t, err)
			}
		}
	}()
	for i := range pods {
		ev, err := dec.Next()
		require.NoError(t, err)
		got := ev.Object.(*corev1.Pod)
		want, err := generated(marshalPod(t, pods[i]), false)
		require.NoError(t, err)
		want.APIVersion, want.Kind = "v1", "Pod"
		require.True(t, reflect.DeepEqual(want, got), "pod %d", i)
		delivered <- got
	}
	close(delivered)
	wg.Wait()
}

// Any kind, item or list: with managedFields dropped, a protobuf object
// decodes as the generated Unmarshal decodes it, managedFields removed;
// and they are skipped, not decoded.
func TestProtobufSkipsManagedFieldsOfAnyKind(t *testing.T) {
	pod := realpod.New(3)
	cm := &corev1.ConfigMap{ObjectMeta: pod.ObjectMeta, Data: map[string]string{"k": "v"}}
	raw := marshalMsg(t, cm)
	d := &protoDecoder{drop: true}
	var got corev1.ConfigMap
	_, err := d.decode(raw, &got)
	require.NoError(t, err)
	var want corev1.ConfigMap
	require.NoError(t, want.Unmarshal(raw))
	require.NotEmpty(t, want.ManagedFields)
	want.ManagedFields = nil
	assert.True(t, reflect.DeepEqual(&want, &got))

	list := marshalMsg(t, &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "9"}, Items: []corev1.ConfigMap{*cm, *cm}})
	var gotList corev1.ConfigMapList
	_, err = d.decodeList(list, &gotList)
	require.NoError(t, err)
	var wantList corev1.ConfigMapList
	require.NoError(t, wantList.Unmarshal(list))
	for i := range wantList.Items {
		wantList.Items[i].ManagedFields = nil
	}
	assert.True(t, reflect.DeepEqual(&wantList, &gotList))

	skipped := testing.AllocsPerRun(50, func() { _, _ = d.decode(raw, &corev1.ConfigMap{}) })
	decoded := testing.AllocsPerRun(50, func() { _ = (&corev1.ConfigMap{}).Unmarshal(raw) })
	assert.Less(t, skipped, decoded-5, "managedFields are skipped, not decoded")

	_, err = d.decode(raw[:len(raw)-3], &corev1.ConfigMap{})
	assert.Error(t, err, "cut bytes are still refused")
}

// The slots stop copying the values of a part that they never find:
// annotations stamped per write are never found again, and once they have
// missed partMissRun times in a row only one in partSample is kept, while
// containers, found by the next pods of their template, are all kept. A
// part found again (annotations that repeat) is all kept again.
func TestPartsCacheKeepsOnlyWhatIsFoundAgain(t *testing.T) {
	c := new(partsCache)
	decode := func(i int, stamp bool) partSet {
		p := realpod.New(i)
		if stamp {
			p.Annotations["written-at"] = strconv.Itoa(i) // each pod's own
		}
		raw := marshalPod(t, p)
		var got corev1.Pod
		hits, ok := c.decodePod(raw, &got, false)
		require.True(t, ok)
		want, err := generated(raw, false)
		require.NoError(t, err)
		require.True(t, reflect.DeepEqual(want, &got), "pod %d differs", i)
		return hits
	}
	kept := func(id partID) (n int) {
		for _, e := range c.slots {
			if e.raw != nil && e.id == id {
				n++
			}
		}
		return n
	}

	n := 100 * realpod.Replicas
	hits := 0
	for i := range n { // template order, annotations stamped
		if decode(i, true).has(partContainers) {
			hits++
		}
	}
	assert.GreaterOrEqual(t, c.misses[partAnnotations], n, "annotations are never found")
	assert.Less(t, c.misses[partContainers], realpod.Replicas, "containers are found")
	assert.Equal(t, n-n/realpod.Replicas, hits, "by every pod but its template's first")
	assert.LessOrEqual(t, kept(partAnnotations), partSlots/4, "few annotations copied")
	// Pods whose annotations repeat (one pod's, again and again): within
	// partSample misses one is kept, and every pod after finds it.
	first := -1
	for i := range 2 * partSample {
		found := decode(n, false).has(partAnnotations)
		if first < 0 && found {
			first = i
		}
		assert.Equal(t, first >= 0, found, "pod %d", i)
	}
	assert.Positive(t, first)
	assert.LessOrEqual(t, first, partSample)
	assert.Zero(t, c.misses[partAnnotations])
}
