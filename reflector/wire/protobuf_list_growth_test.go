package wire

import (
	"encoding/json"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A hostile page of many tiny items whose first item does not decode
// fails before its items are made: what decodeItems makes up front is
// paid for by the page's bytes, not by its item count.
func TestTinyItemsAreNotMadeBeforeDecoding(t *testing.T) {
	tgt, err := newTarget(NewScheme(), podsResource.Kind, false)
	require.NoError(t, err)
	const n = 200_000
	bad := field(listItemsField, field(1, []byte{0xff})) // metadata: a truncated varint
	raw := append(bad, repeatField(listItemsField, nil, n-1)...)

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = newProtoDecoder(tgt, true).decodeList(raw, &corev1.PodList{})
	runtime.ReadMemStats(&after)
	require.Error(t, err, "the generated decoder refuses the first item")
	allocated := after.TotalAlloc - before.TotalAlloc
	podSize := uint64(unsafe.Sizeof(corev1.Pod{}))
	t.Logf("page of %d bytes, %d items: %d bytes allocated (a pod is %d bytes)", len(raw), n, allocated, podSize)
	assert.Less(t, allocated, uint64(len(raw))/bytesPerItem*podSize*2+1<<20,
		"items made for a page of tiny items are bounded by its bytes")
	assert.Less(t, allocated, n*podSize/10, "not all %d items made up front", n)
}

// Small pods, which the page's bytes do not pay for up front, grow the
// items as they decode. The result is the generated decoder's, and the
// parts cache is left with no owner outside the items the list keeps.
func TestSmallItemsGrowAndKeepTheirParts(t *testing.T) {
	tgt, err := newTarget(NewScheme(), podsResource.Kind, false)
	require.NoError(t, err)
	list := smallPodList()
	raw := marshalMsg(t, list)
	require.Less(t, itemsBeforeDecoding(len(list.Items), len(raw)), len(list.Items), "the items must grow")

	d := newProtoDecoder(tgt, true)
	got := &corev1.PodList{}
	hits, err := d.decodeList(raw, got)
	require.NoError(t, err)
	var want corev1.PodList
	require.NoError(t, want.Unmarshal(raw))
	assert.True(t, reflect.DeepEqual(&want, got))
	assert.Len(t, hits, len(want.Items))
	assert.Positive(t, countShared(hits), "items still take parts from each other")
	assertOwnersKept(t, d.parts, got)
}

// smallPodList is 300 small pods of three templates, whose first pod's
// parts are its own: they are kept (owned by it) and never met again, so
// they are still owned when the items grow past it.
func smallPodList() *corev1.PodList {
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "9"}}
	for i := range 300 {
		list.Items = append(list.Items, corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p" + strconv.Itoa(i), Labels: map[string]string{"app": strconv.Itoa(i % 3)}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i" + strconv.Itoa(i%3)}}},
		})
	}
	list.Items[0].Labels = map[string]string{"solo": "yes"}
	list.Items[0].Spec.Containers[0].Image = "solo"
	return list
}

func countShared(hits []partSet) int {
	n := 0
	for _, h := range hits {
		if h != 0 {
			n++
		}
	}
	return n
}

// assertOwnersKept checks that every owner c holds is an item of list,
// not a copy the items' growth left behind.
func assertOwnersKept(t *testing.T, c *partsCache, list *corev1.PodList) {
	t.Helper()
	kept := make(map[*corev1.Pod]bool, len(list.Items))
	for i := range list.Items {
		kept[&list.Items[i]] = true
	}
	for _, e := range c.slots {
		if e.owner != nil {
			assert.True(t, kept[e.owner], "an owner is an item the list keeps, not a moved copy")
		}
	}
}

// The JSON decoder makes a page's items as its bytes pay for them too.
func TestJSONTinyItemsAreNotMadeBeforeDecoding(t *testing.T) {
	const n = 200_000
	body := []byte(`{"items":[{"metadata":5}` + strings.Repeat(`,{}`, n-1) + `]}`)
	d := newJSONPartsTest(t, false)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := d.decodeList(body, &corev1.PodList{})
	runtime.ReadMemStats(&after)
	require.Error(t, err, "encoding/json refuses the first item")
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("page of %d bytes, %d items: %d bytes allocated", len(body), n, allocated)
	// Each item costs its span and part set too (a few dozen bytes): all
	// of that is a fraction of a pod per item.
	assert.Less(t, allocated, n*uint64(unsafe.Sizeof(corev1.Pod{}))/4, "not all %d items made up front", n)
}

// Small JSON pods grow their items too, keep their parts, and leave the
// cache no owner outside the list.
func TestJSONSmallItemsGrowAndKeepTheirParts(t *testing.T) {
	list := smallPodList()
	body := marshalJSON(t, list)
	require.Less(t, itemsBeforeDecoding(len(list.Items), len(body)), len(list.Items), "the items must grow")
	d := newJSONPartsTest(t, false)
	var got corev1.PodList
	hits, err := d.decodeList(body, &got)
	require.NoError(t, err)
	var want corev1.PodList
	require.NoError(t, json.Unmarshal(body, &want))
	assert.True(t, reflect.DeepEqual(&want, &got))
	assert.Positive(t, countShared(hits), "items still take parts from each other")
	assertOwnersKept(t, &d.cache, &got)
}

// repeatField is n copies of field num with value val.
func repeatField(num int, val []byte, n int) []byte {
	one := field(num, val)
	out := make([]byte, 0, len(one)*n)
	for range n {
		out = append(out, one...)
	}
	return out
}
