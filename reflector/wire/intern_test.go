package wire

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"testing"
	"unsafe"

	"github.com/seed31a95821/informer/rest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer/internal/realpod"
	"github.com/seed31a95821/informer/internal/share"
)

// realPodList encodes pods 0..n-1 of the realistic fixture as a list body.
func realPodList(t testing.TB, contentType string, n int) []byte {
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	return podListOf(t, contentType, realpod.New, order)
}

// podListOf encodes pod(i) for each i of order as a list body.
func podListOf(t testing.TB, contentType string, pod func(int) *corev1.Pod, order []int) []byte {
	t.Helper()
	list := &corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}}
	for _, i := range order {
		p := pod(i)
		p.ResourceVersion = fmt.Sprint(100 + i)
		list.Items = append(list.Items, *p)
	}
	if contentType == rest.ContentTypeJSON {
		b, err := json.Marshal(list)
		require.NoError(t, err)
		return b
	}
	return protoEnvelopeBytes(t, "v1", "PodList", list)
}

// protoEnvelopeBytes wraps a message in the k8s protobuf envelope.
func protoEnvelopeBytes(t testing.TB, apiVersion, kind string, m interface{ Marshal() ([]byte, error) }) []byte {
	t.Helper()
	raw, err := m.Marshal()
	require.NoError(t, err)
	u := &kruntime.Unknown{TypeMeta: kruntime.TypeMeta{APIVersion: apiVersion, Kind: kind}, Raw: raw}
	env, err := u.Marshal()
	require.NoError(t, err)
	return append(append([]byte(nil), protobufMagic...), env...)
}

var internContentTypes = []string{rest.ContentTypeJSON, rest.ContentTypeProtobuf}

func podTarget(t testing.TB, intern bool) *target {
	t.Helper()
	tgt, err := newTarget(NewScheme(), podsResource.Kind, false)
	require.NoError(t, err)
	if intern {
		tgt.strings = &share.Table{Budget: share.StringsBudget}
	}
	return tgt
}

func sameString[S ~string](a, b S) bool {
	return unsafe.StringData(string(a)) == unsafe.StringData(string(b))
}

// Interning changes where a list's strings live, never what the objects
// hold: in both encodings the interned list equals the plainly decoded one,
// and two pods of one deployment share their repeated strings.
func TestInternedListDecodesTheSameObjects(t *testing.T) {
	for _, ct := range internContentTypes {
		t.Run(ct, func(t *testing.T) {
			body := realPodList(t, ct, 40)
			plain, err := podTarget(t, false).decodeList(ct, body)
			require.NoError(t, err)
			interned, err := podTarget(t, true).decodeList(ct, body)
			require.NoError(t, err)
			require.True(t, equality.Semantic.DeepEqual(plain, interned), "interning changed the decoded list")

			// The first pod keeps its own strings: a string is kept when
			// it is met a second time (share's doorkeeper.go).
			a, b := &interned.(*corev1.PodList).Items[1], &interned.(*corev1.PodList).Items[2]
			assert.True(t, sameString(a.Namespace, b.Namespace), "namespace")
			assert.True(t, sameString(a.Labels["app"], b.Labels["app"]), "label value")
			assert.True(t, sameString(a.Spec.Containers[0].Image, b.Spec.Containers[0].Image), "image")
			assert.True(t, sameString(a.Status.Conditions[0].Type, b.Status.Conditions[0].Type), "condition type")
			assert.True(t, sameString(a.OwnerReferences[0].Kind, b.OwnerReferences[0].Kind), "owner kind")
			for k := range a.Labels {
				for k2 := range b.Labels {
					if k == k2 {
						assert.True(t, sameString(k, k2), "label key %q", k)
					}
				}
			}
			assert.False(t, sameString(a.Name, b.Name), "names are not interned")
			p := &plain.(*corev1.PodList).Items
			assert.False(t, sameString((*p)[0].Namespace, (*p)[1].Namespace), "without a table nothing is shared")
		})
	}
}

// The watch decoders intern too, with the same table as the lists.
func TestInternedWatchEventsShareStrings(t *testing.T) {
	for _, ct := range internContentTypes {
		t.Run(ct, func(t *testing.T) {
			var stream bytes.Buffer
			for i := range 3 {
				writeWatchFrame(t, &stream, ct, realpod.New(i))
			}
			tgt := podTarget(t, true)
			var dec eventDecoder
			if ct == rest.ContentTypeJSON {
				dec = newJSONEventDecoder(&stream, rest.DefaultMaxFrameBytes, tgt)
			} else {
				dec = newProtobufEventDecoder(&stream, rest.DefaultMaxFrameBytes, tgt)
			}
			var pods []*corev1.Pod
			for {
				ev, err := dec.Next()
				if err == io.EOF {
					break
				}
				require.NoError(t, err)
				pods = append(pods, ev.Object.(*corev1.Pod))
			}
			require.Len(t, pods, 3)
			for i, p := range pods {
				want := realpod.New(i)
				want.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
				assert.True(t, equality.Semantic.DeepEqual(want, p), "decoded pod %d differs from the one sent", i)
			}
			// The first pod keeps its own strings: a string is kept when
			// it is met a second time (share's doorkeeper.go).
			assert.True(t, sameString(pods[1].Labels["app.kubernetes.io/version"], pods[2].Labels["app.kubernetes.io/version"]))
			assert.True(t, sameString(pods[1].Status.ContainerStatuses[1].ImageID, pods[2].Status.ContainerStatuses[1].ImageID))
		})
	}
}

func writeWatchFrame(t *testing.T, w *bytes.Buffer, ct string, pod *corev1.Pod) {
	t.Helper()
	if ct == rest.ContentTypeJSON {
		b, err := json.Marshal(map[string]any{"type": watch.Added, "object": pod})
		require.NoError(t, err)
		w.Write(append(b, '\n'))
		return
	}
	obj := protoEnvelopeBytes(t, "v1", "Pod", pod)
	ev := &metav1.WatchEvent{Type: string(watch.Added), Object: kruntime.RawExtension{Raw: obj}}
	frame, err := ev.Marshal()
	require.NoError(t, err)
	require.NoError(t, binary.Write(w, binary.BigEndian, uint32(len(frame))))
	w.Write(frame)
}

// BenchmarkListHeapPerPod decodes a list of realistic pods as a relist
// does, keeps every pod (each in its own allocation, as the cache holds
// them) and reports what they retain after a collection, per pod, with and
// without the string table, on three populations: replica sets of ten in
// name order, the same in random order (siblings far apart), and 30% of
// the pods from templates of their own:
//
//	go test -run '^$' -bench ListHeapPerPod ./reflector/wire/
func BenchmarkListHeapPerPod(b *testing.B) {
	const n = 5000
	pops := []struct {
		name  string
		pod   func(int) *corev1.Pod
		order []int
	}{
		{"replicasets", realpod.New, slices.Sorted(slices.Values(realpod.ChurnOrder(n, 0)))},
		{"replicasets-random", realpod.New, realpod.ChurnOrder(n, 1)},
		{"unique30", realpod.Mixed, slices.Sorted(slices.Values(realpod.ChurnOrder(n, 0)))},
	}
	for _, ct := range internContentTypes {
		for _, pop := range pops {
			body := podListOf(b, ct, pop.pod, pop.order)
			for _, intern := range []bool{false, true} {
				b.Run(fmt.Sprintf("%s/%s/intern=%v", ct[len("application/"):], pop.name, intern), func(b *testing.B) {
					b.ReportAllocs()
					var perPod float64
					for b.Loop() {
						tgt := podTarget(b, intern)
						before := heapLive()
						list, err := tgt.decodeList(ct, body)
						require.NoError(b, err)
						kept := make([]*corev1.Pod, 0, n)
						for i := range list.(*corev1.PodList).Items {
							p := list.(*corev1.PodList).Items[i]
							kept = append(kept, &p)
						}
						list = nil
						perPod = float64(heapLive()-before) / n
						runtime.KeepAlive(kept)
					}
					b.ReportMetric(perPod, "B/pod")
				})
			}
		}
	}
}

func heapLive() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
