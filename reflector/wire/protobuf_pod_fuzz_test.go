package wire

import (
	"bytes"
	"fmt"
	"reflect"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer/internal/realpod"
	"github.com/seed31a95821/informer/internal/share"
)

// FuzzProtobufPodDecoder: whatever the bytes of a pod, the protobuf
// decoder an informer runs (parts cache, strings table, share table,
// managedFields dropped or not) gives the generated Unmarshal's pod, or
// its error, from a frame buffer that is overwritten as soon as it
// returns; decoding the same bytes again, from the parts its cache kept
// or from a share table that holds the first pod's values, gives the same
// pod; and the interning and sharing an informer runs after each pod
// changes none of them. With managedFields dropped, bytes whose only
// fault is inside managedFields decode (they are skipped, not read).
//
// The seed corpus (realpod's pods, and shapes the API server does not
// write) runs as an ordinary test; go test -fuzz FuzzProtobufPodDecoder
// mutates it.
func FuzzProtobufPodDecoder(f *testing.F) {
	realpods := new(share.Table) // realpod's values, as an informer keeps them
	var keep []*corev1.Pod       // the table holds its values weakly
	for i := range 24 {
		p := realpod.Mixed(i)
		if i%7 == 0 {
			p = allPartsPod()
		}
		q, err := generated(marshalPod(f, p), false)
		require.NoError(f, err)
		realpods.Share(q)
		keep = append(keep, q)
	}
	for i := range 8 { // pods of the same templates, values of their own
		f.Add(marshalPod(f, realpod.Mixed(100+i)), i%2 == 1)
	}
	for _, raw := range unusualPods(f) {
		f.Add(raw, false)
	}
	f.Fuzz(func(t *testing.T, raw []byte, drop bool) {
		want, wantErr := generated(raw, drop)
		strs := &share.Table{Budget: share.StringsBudget}
		warm := &protoDecoder{drop: drop, parts: &partsCache{table: realpods, strs: strs}}
		first, hits := decodeLikeAFrame(t, warm, raw, want, wantErr, drop)
		if first == nil {
			return
		}
		snap := first.DeepCopy()
		// As the informer does next: intern, then share into its table,
		// which the next decoder looks its parts up in.
		local := new(share.Table)
		withPartsHidden(first, hits, strs.Strings)
		local.Share(first)
		fresh := &protoDecoder{drop: drop, parts: &partsCache{table: local, strs: strs}}
		for _, d := range []*protoDecoder{fresh, warm} {
			p, hits := decodeLikeAFrame(t, d, raw, want, wantErr, drop)
			withPartsHidden(p, hits, strs.Strings)
			local.Share(p)
		}
		require.True(t, reflect.DeepEqual(snap, first), "the first pod changed: %s", firstDiff("pod", reflect.ValueOf(snap), reflect.ValueOf(first)))
		runtime.KeepAlive(first)
	})
	runtime.KeepAlive(keep)
}

// decodeLikeAFrame decodes raw with d from a buffer it overwrites as soon
// as d returns, as the next frame does, and requires the generated
// Unmarshal's result (want or wantErr). It returns the pod (nil on error)
// and the parts it shares.
func decodeLikeAFrame(t *testing.T, d *protoDecoder, raw []byte, want *corev1.Pod, wantErr error, drop bool) (*corev1.Pod, partSet) {
	t.Helper()
	buf := bytes.Clone(raw)
	got := new(corev1.Pod)
	hits, err := d.decode(buf, got)
	for i := range buf {
		buf[i] ^= 0xff
	}
	switch {
	case wantErr != nil && err != nil:
		require.Equal(t, wantErr.Error(), err.Error())
		return nil, 0
	case wantErr != nil && drop:
		return nil, 0 // a fault inside managedFields, skipped: nothing to compare with
	case wantErr != nil:
		t.Fatalf("decoded without error; the generated Unmarshal: %v", wantErr)
	case err != nil:
		t.Fatalf("%v; the generated Unmarshal decodes it", err)
	}
	require.True(t, reflect.DeepEqual(want, got), "%s", firstDiff("pod", reflect.ValueOf(want), reflect.ValueOf(got)))
	return got, hits
}

// unusualPods are pods' bytes of shapes the API server does not write,
// around the fields the decoder splits off: fields repeated (next to each
// other, which the decoder reads, or apart, which it leaves to the
// generated Unmarshal), of another wire type, empty, truncated.
func unusualPods(t testing.TB) [][]byte {
	p := realpod.New(103)
	p.Status.PodIPs = append(p.Status.PodIPs, corev1.PodIP{IP: "fd00::3"})
	p.Status.HostIPs = []corev1.HostIP{{IP: p.Status.HostIP}, {IP: "fd00::1"}}
	p.Labels[""] = ""
	p.Spec.NodeSelector = map[string]string{"zone": "a"}
	p.ManagedFields[0].FieldsV1.Raw = []byte{}
	meta, spec, status := marshalMsg(t, &p.ObjectMeta), marshalMsg(t, &p.Spec), marshalMsg(t, &p.Status)
	pod := func(meta, spec, status []byte) []byte {
		return concat(field(1, meta), field(2, spec), field(3, status))
	}
	// Each message below starts with its field 1: a field 1 put before
	// it is a string sent twice, together.
	name := field(1, []byte("other"))
	cond := marshalMsg(t, &p.Status.Conditions[0])
	cs := marshalMsg(t, &p.Status.ContainerStatuses[0])
	entry := marshalMsg(t, &p.ManagedFields[0])
	varint := []byte{1 << 3, 7}
	whole := pod(meta, spec, status)
	return [][]byte{
		whole,
		pod(meta, spec, concat(name, status)),
		pod(meta, spec, concat(status, name)),
		pod(meta, spec, concat(varint, status)),
		pod(meta, spec, concat(field(2, concat(name, cond)), status)),
		pod(meta, spec, concat(field(2, concat(varint, cond)), status)),
		pod(meta, spec, concat(status, field(2, cond))),
		pod(meta, spec, concat(field(8, concat(name, cs)), status)),
		pod(meta, spec, concat(field(12, concat(name, field(1, []byte("10.9.9.9")))), status)),
		pod(meta, spec, concat(bytes.Repeat([]byte{2<<3 | 2, 0}, 64), status)),
		pod(concat(meta, field(17, concat(name, entry))), spec, status),
		pod(concat(meta, field(17, field(7, concat(field(1, []byte("{}")), field(1, []byte("{\"b\":{}}")))))), spec, status),
		pod(concat(meta, field(17, field(7, field(1, nil)))), spec, status),
		pod(concat(meta, field(17, []byte{6 << 3, 1})), spec, status),
		pod(before(meta, 11, field(11, concat(field(2, []byte("v")), field(1, []byte("k"))))), spec, status),
		pod(before(meta, 11, field(11, concat(field(1, []byte("k")), field(2, []byte("v")), field(1, []byte("k2"))))), spec, status),
		pod(before(meta, 3, field(3, nil)), spec, status),
		pod(before(meta, 3, field(3, []byte("other"))), spec, status),
		pod(before(meta, 17, field(17, nil)), spec, status),
		pod(meta, before(spec, 19, field(19, []byte("other"))), status),
		pod(meta, before(spec, 7, field(7, concat(field(1, []byte("zone")), field(2, []byte("b"))))), status),
		pod(meta, spec, before(status, 5, field(5, []byte("10.0.0.9")))),
		pod(meta, spec, before(status, 16, field(16, field(1, []byte("10.0.0.9"))))),
		whole[:len(whole)-3],
		concat(whole, field(3, marshalMsg(t, &corev1.PodStatus{Phase: "Failed"}))),
		concat(field(4, []byte(schema.GroupVersionKind{Version: "v1", Kind: "Pod"}.String())), whole),
	}
}

// before returns msg with ins put before its first field numbered num.
func before(msg []byte, num int32, ins []byte) []byte {
	for off := 0; off < len(msg); {
		n, size, ok := nextField(msg[off:])
		if !ok {
			break
		}
		if n == num {
			return concat(msg[:off], ins, msg[off:])
		}
		off += size
	}
	panic(fmt.Sprintf("no field %d", num))
}
