package wire

import (
	"bytes"
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer/internal/realpod"
	"github.com/seed31a95821/informer/internal/share"
)

// checkAsGenerated decodes raw with d from a copy that it then overwrites,
// and requires what the generated Unmarshal makes of raw: the same error,
// or an equal pod that holds nothing of the bytes it was decoded from.
func checkAsGenerated(t *testing.T, d *protoDecoder, raw []byte) *corev1.Pod {
	t.Helper()
	buf := bytes.Clone(raw)
	var got corev1.Pod
	_, err := d.decode(buf, &got)
	for i := range buf {
		buf[i] = 0xff // a reused frame buffer, overwritten by the next frame
	}
	want, wantErr := generated(raw, false)
	if wantErr != nil {
		require.Error(t, err)
		assert.Equal(t, wantErr.Error(), err.Error())
		return nil
	}
	require.NoError(t, err)
	require.True(t, reflect.DeepEqual(want, &got), "%s", firstDiff("pod", reflect.ValueOf(want), reflect.ValueOf(&got)))
	return &got
}

// Strings the table keeps are taken from it while decoding, not made and
// interned after: the decoded pod holds the table's copies. The table
// keeps a string the second time it meets it (internal/share's
// doorkeeper), so the copies are shared from the second pod on.
func TestRepeatedStringsAreTheTablesCopies(t *testing.T) {
	strs := &share.Table{}
	d := &protoDecoder{parts: &partsCache{strs: strs}}
	checkAsGenerated(t, d, marshalPod(t, realpod.New(0)))
	first := checkAsGenerated(t, d, marshalPod(t, realpod.New(1)))
	second := checkAsGenerated(t, d, marshalPod(t, realpod.New(2)))
	same := func(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }
	assert.True(t, same(first.Namespace, second.Namespace), "namespace")
	assert.True(t, same(string(first.Status.Conditions[0].Type), string(second.Status.Conditions[0].Type)), "condition type")
	assert.True(t, same(first.Status.ContainerStatuses[0].Image, second.Status.ContainerStatuses[0].Image), "image")
	assert.True(t, same(first.ManagedFields[0].Manager, second.ManagedFields[0].Manager), "manager")
	assert.True(t, same(first.Spec.SchedulerName, second.Spec.SchedulerName), "scheduler")
	assert.True(t, same(second.Status.PodIP, second.Status.PodIPs[0].IP), "the pod's IP, one string")
	table := new(share.Table)
	table.Share(first)
	d.parts.table = table
	third := checkAsGenerated(t, d, marshalPod(t, realpod.New(3)))
	assert.Same(t, &first.ManagedFields[0].FieldsV1.Raw[0], &third.ManagedFields[0].FieldsV1.Raw[0], "the controller's fieldsV1, found in the share table")
	assert.NotSame(t, &first.ManagedFields[1].FieldsV1.Raw[0], &third.ManagedFields[1].FieldsV1.Raw[0], "the kubelet's, each pod's own")
	for k := range first.Annotations { // decoded afresh: a map of each pod's own
		if _, ok := second.Annotations[k]; ok {
			for k2 := range second.Annotations {
				if k2 == k {
					assert.True(t, same(k, k2), "annotation key %q", k)
				}
			}
		}
	}
}

// Bytes of shapes the API server does not write, around the strings and
// lists split off: the generated Unmarshal's pod, or its error.
func TestRepeatedStringsOfUnusualShapeDecodeAsTheGeneratedUnmarshal(t *testing.T) {
	p := realpod.New(3)
	meta, spec, status := marshalMsg(t, &p.ObjectMeta), marshalMsg(t, &p.Spec), marshalMsg(t, &p.Status)
	pod := func(meta, spec, status []byte) []byte {
		return concat(field(1, meta), field(2, spec), field(3, status))
	}
	cond := marshalMsg(t, &p.Status.Conditions[0])
	entry := func(fields ...[]byte) []byte { return field(11, concat(fields...)) } // a label
	varint := []byte{1 << 3, 7}                                                    // field 1, a varint: 7
	cases := map[string][]byte{
		"status twice":                concat(pod(meta, spec, status), field(3, marshalMsg(t, &corev1.PodStatus{Phase: "Failed", Conditions: []corev1.PodCondition{{Type: "Late"}}}))),
		"phase twice":                 pod(meta, spec, concat(status, field(1, []byte("Failed")))),
		"phase twice, together":       pod(meta, spec, concat(field(1, []byte("Pending")), status)),
		"phase a varint":              pod(meta, spec, concat(status, varint)),
		"condition type twice":        pod(meta, spec, concat(status, field(2, concat(cond, field(1, []byte("Other")))))),
		"condition type a varint":     pod(meta, spec, concat(status, field(2, concat(cond, varint)))),
		"condition not a message":     pod(meta, spec, concat(status, []byte{2 << 3, 1})),
		"conditions apart":            pod(meta, spec, concat(status, field(2, cond))),
		"podIPs not podIP":            pod(meta, spec, concat(status, field(12, field(1, []byte("10.9.9.9"))))),
		"namespace twice":             pod(concat(meta, field(3, []byte("other"))), spec, status),
		"namespace empty":             pod(concat(meta, field(3, nil)), spec, status),
		"scheduler twice":             pod(meta, concat(spec, field(19, []byte("other"))), status),
		"manager twice":               pod(concat(meta, field(17, concat(field(1, []byte("a")), field(1, []byte("b"))))), spec, status),
		"fieldsType a varint":         pod(concat(meta, field(17, []byte{6 << 3, 1})), spec, status),
		"fieldsV1 twice":              pod(concat(meta, field(17, concat(field(7, field(1, []byte("{}"))), field(7, field(1, []byte("{\"a\":{}}")))))), spec, status),
		"fieldsV1 empty":              pod(concat(meta, field(17, field(7, nil))), spec, status),
		"fieldsV1 raw empty":          pod(concat(meta, field(17, field(7, field(1, nil)))), spec, status),
		"fieldsV1 raw twice":          pod(concat(meta, field(17, field(7, concat(field(1, []byte("{}")), field(1, []byte("{\"b\":{}}")))))), spec, status),
		"fieldsV1 raw a varint":       pod(concat(meta, field(17, field(7, []byte{1 << 3, 1}))), spec, status),
		"label value first":           pod(concat(entry(field(1, []byte("a")), field(2, []byte("b"))), entry(field(2, []byte("v")), field(1, []byte("zz")))), spec, status),
		"label without value":         pod(concat(entry(field(1, []byte("a")), field(2, []byte("b"))), entry(field(1, []byte("zz")))), spec, status),
		"label with an unknown field": pod(concat(entry(field(1, []byte("a")), field(2, []byte("b"))), entry(field(1, []byte("zz")), field(2, []byte("v")), field(3, nil))), spec, status),
		"label twice":                 pod(concat(entry(field(1, []byte("a")), field(2, []byte("b"))), entry(field(1, []byte("a")), field(2, []byte("other")))), spec, status),
		"label empty entry":           pod(concat(entry(field(1, []byte("a")), field(2, []byte("b"))), entry()), spec, status),
	}
	table := new(share.Table)
	for name, raw := range cases {
		t.Run(name, func(t *testing.T) {
			for _, d := range []*protoDecoder{{parts: &partsCache{}}, {parts: &partsCache{strs: &share.Table{}, table: table}}} {
				checkAsGenerated(t, d, raw)
				checkAsGenerated(t, d, raw) // a second time: what the first kept
			}
		})
	}
	// The labels of a pod on their own: decoded as a map part.
	d := &protoDecoder{parts: &partsCache{strs: &share.Table{}}}
	got := checkAsGenerated(t, d, concat(field(1, marshalMsg(t, &metav1.ObjectMeta{Labels: map[string]string{"a": "", "": "b"}}))))
	assert.Len(t, got.Labels, 2)
}
