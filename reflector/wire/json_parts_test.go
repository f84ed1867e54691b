package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
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

// newJSONPartsTest returns a JSON parts decoder as a ListerWatcher with
// ShareParts builds it, managedFields skipped (drop) or not.
func newJSONPartsTest(t testing.TB, drop bool) *jsonPartsDecoder {
	tgt, err := newTarget(NewScheme(), podsResource.Kind, false)
	require.NoError(t, err)
	if drop {
		tgt.dropManagedFields = true
		tgt.jsonSkip = newJSONSkip(tgt.itemType, tgt.listType)
		require.NotNil(t, tgt.jsonSkip)
	}
	d := newJSONPartsDecoder(tgt, true)
	require.NotNil(t, d)
	return d
}

// wholeJSON is what encoding/json makes of raw, decoded whole, as the
// decoder without parts does.
func wholeJSON(d *jsonPartsDecoder, raw []byte) (*corev1.Pod, error) {
	var p corev1.Pod
	err := json.Unmarshal(raw, d.skip.jsonInto(&p))
	return &p, err
}

// checkJSONPod decodes raw with d and whole, and requires the same pod or
// the same error.
func checkJSONPod(t testing.TB, d *jsonPartsDecoder, raw []byte) partSet {
	t.Helper()
	var got corev1.Pod
	hits, err := d.decodePod(raw, &got)
	want, wantErr := wholeJSON(d, raw)
	if wantErr != nil {
		require.Error(t, err, "%s", raw)
		require.Equal(t, wantErr.Error(), err.Error())
		return hits
	}
	require.NoError(t, err, "%s", raw)
	require.True(t, reflect.DeepEqual(want, &got), "decoded differently from encoding/json:\n%s", raw)
	return hits
}

func marshalJSON(t testing.TB, v any) []byte {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// allPartsPod is a pod with every part set.
func allPartsPod() *corev1.Pod {
	p := realpod.New(5)
	p.Finalizers = []string{"example.com/hold"}
	p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox"}}
	p.Spec.NodeSelector = map[string]string{"zone": "a"}
	p.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: new(int64)}
	p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "pull"}}
	p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}
	p.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
	p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone"}}
	return p
}

// A pod decoded with parts taken from earlier pods equals the pod
// encoding/json decodes whole from the same bytes, managedFields skipped
// or not; and parts are taken, every one of them (so no part's name is
// misspelt: it would be decoded with the rest, never taken).
func TestJSONPartsDecodeAsEncodingJSON(t *testing.T) {
	for _, drop := range []bool{false, true} {
		t.Run(fmt.Sprintf("drop=%v", drop), func(t *testing.T) {
			d := newJSONPartsTest(t, drop)
			var containers int
			for _, p := range partsPopulation(300) {
				if checkJSONPod(t, d, marshalJSON(t, p)).has(partContainers) {
					containers++
				}
			}
			assert.Greater(t, containers, 200, "pods of one template take their containers from the cache")
			d = newJSONPartsTest(t, drop) // an empty cache, with room for every part
			raw := marshalJSON(t, allPartsPod())
			checkJSONPod(t, d, raw)
			hits := checkJSONPod(t, d, raw)
			for id := range numParts {
				assert.True(t, hits.has(id), "part %s taken from the cache", jsonPartNames[id])
			}
		})
	}
}

// Pods written to mislead a scanner: each decodes as encoding/json
// decodes it whole, value or error, the first time and again once its
// parts are cached.
func TestJSONPartsTrickyPods(t *testing.T) {
	base := string(marshalJSON(t, realpod.New(1)))
	spec := `"spec":{"nodeName":"n","containers":[{"name":"c","image":"i"}]`
	cases := map[string]string{
		"plain":                    `{"metadata":{"name":"a","labels":{"x":"y"}},` + spec + `}}`,
		"escaped part key":         `{"metadata":{"name":"a"},"spec":{"\u0063ontainers":[{"name":"x"}],"containers":[{"name":"c"}]}}`,
		"escaped label key":        `{"metadata":{"lab\u0065ls":{"x":"y"},"labels":{"z":"w"}}}`,
		"escaped metadata":         `{"m\u0065tadata":{"labels":{"x":"y"}},"metadata":{"labels":{"z":"w"}}}`,
		"escape elsewhere":         `{"metadata":{"n\u0061me":"a","labels":{"x":"y"}},` + spec + `}}`,
		"labels twice":             `{"metadata":{"labels":{"a":"1"},"name":"n","labels":{"b":"2"}}}`,
		"containers twice":         `{"spec":{"containers":[{"name":"a","image":"x"}],"containers":[{"name":"b"}]}}`,
		"affinity twice":           `{"spec":{"affinity":{"nodeAffinity":{}},"affinity":{"podAffinity":{}}}}`,
		"spec twice":               `{"spec":{"containers":[{"name":"a"}]},"spec":{"nodeName":"n"}}`,
		"metadata twice":           `{"metadata":{"labels":{"a":"1"}},"metadata":{"name":"n"}}`,
		"other case part":          `{"spec":{"Containers":[{"name":"a"}],"containers":[{"name":"b","image":"x"}]}}`,
		"other case only":          `{"metadata":{"LABELS":{"a":"1"}},"spec":{"CONTAINERS":[{"name":"b"}]}}`,
		"other case spec":          `{"Spec":{"containers":[{"name":"a"}]},"spec":{"nodeName":"n"}}`,
		"non-ASCII fold":           `{"metadata":{"labelſ":{"a":"1"},"labels":{"b":"2"}}}`,
		"escaped non-ASCII fold":   `{"metadata":{"label\u017f":{"a":"1"},"labels":{"b":"2"}}}`,
		"kelvin":                   `{"spec":{"tolerations":[{"key":"k"}],"affinity":{},"nodeSelector":{"\u212a":"v"}}}`,
		"container named parts":    `{"spec":{"containers":[{"name":"containers","env":[{"name":"labels","value":"spec"}]}],"volumes":[{"name":"metadata"}]}}`,
		"nested same-name keys":    `{"metadata":{"labels":{"containers":"x","spec":"y","labels":"z"}},"spec":{"containers":[{"name":"a","containers":[]}]}}`,
		"strings with braces":      `{"metadata":{"name":"}{][,\"","annotations":{"a":"\"}],{\\"}},"spec":{"hostname":"\"containers\":[]","containers":[{"name":"a"}]}}`,
		"whitespace":               " \n{ \"metadata\" :\t{ \"labels\" : { \"a\" : \"1\" } , \"name\" : \"n\" } ,\r\n \"spec\" : { \"containers\" : [ { \"name\" : \"a\" } ] } } \n",
		"nulls":                    `{"metadata":{"labels":null,"annotations":null,"ownerReferences":null},"spec":{"containers":null,"affinity":null,"securityContext":null}}`,
		"null metadata":            `{"metadata":null,"spec":{"containers":[{"name":"a"}]}}`,
		"null spec":                `{"metadata":{"labels":{"a":"b"}},"spec":null}`,
		"empty":                    `{"metadata":{"labels":{},"finalizers":[]},"spec":{"containers":[],"volumes":[],"tolerations":[]}}`,
		"empty objects":            `{"metadata":{},"spec":{}}`,
		"empty pod":                `{}`,
		"out of order":             `{"status":{"phase":"Running"},"spec":{"nodeName":"n","containers":[{"name":"a"}]},"kind":"Pod","metadata":{"labels":{"a":"b"},"name":"n"},"apiVersion":"v1"}`,
		"only parts":               `{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"a"}]}}`,
		"part last":                `{"metadata":{"name":"n","labels":{"a":"b"}},"spec":{"nodeName":"n","containers":[{"name":"a"}]}}`,
		"unknown keys":             `{"future":[1,{"x":[]}],"metadata":{"future":{"labels":1},"labels":{"a":"b"}},"spec":{"future":null,"containers":[]}}`,
		"wrong type part":          `{"metadata":{"labels":["a"]},"spec":{"containers":[{"name":"a"}]}}`,
		"wrong type deep":          `{"spec":{"containers":[{"name":"a","ports":[{"containerPort":"80"}]}]}}`,
		"wrong type rest":          `{"metadata":{"name":5,"labels":{"a":"b"}},"spec":{"containers":[{"name":"a"}]}}`,
		"wrong type metadata":      `{"metadata":[],"spec":{"containers":[{"name":"a"}]}}`,
		"bad quantity":             `{"spec":{"containers":[{"name":"a","resources":{"limits":{"cpu":"lots"}}}]}}`,
		"trailing garbage":         `{"metadata":{"labels":{"a":"b"}}} x`,
		"two objects":              `{"metadata":{}}{"spec":{}}`,
		"missing comma":            `{"metadata":{"labels":{"a":"b"} "name":"n"}}`,
		"trailing comma":           `{"metadata":{"labels":{"a":"b"},}}`,
		"mismatched brackets":      `{"metadata":{"labels":{"a":"b"]},"spec":{"containers":[{"name":"a"}}}`,
		"unterminated":             `{"metadata":{"labels":{"a":"b`,
		"not an object":            `["metadata"]`,
		"scalar junk":              `{"metadata":{"labels":tru,"name":"n"}}`,
		"number value":             `{"metadata":{"generation":12e3,"labels":{"a":"b"}}}`,
		"bad UTF-8 in part":        "{\"metadata\":{\"labels\":{\"a\":\"\xff\"}}}",
		"control char in key":      "{\"metadata\":{\"lab\x01els\":{}}}",
		"deep nesting in unknown":  `{"metadata":{"x":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `,"labels":{}}}`,
		"realpod with junk inside": strings.Replace(base, `"containers":[`, `"containers":[1,`, 1),
		"realpod":                  base,
	}
	for _, drop := range []bool{false, true} {
		d := newJSONPartsTest(t, drop)
		for name, raw := range cases {
			t.Run(fmt.Sprintf("%s/drop=%v", name, drop), func(t *testing.T) {
				checkJSONPod(t, d, []byte(raw))
				checkJSONPod(t, d, []byte(raw)) // its parts cached now
			})
		}
	}
}

// Any bytes, cut or corrupted: the decoder succeeds exactly when
// encoding/json does, with the same pod, and fails with its error
// otherwise; the hostile bytes never make it panic.
func TestJSONPartsDamagedBytes(t *testing.T) {
	d := newJSONPartsTest(t, false)
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, p := range partsPopulation(12) {
		raw := marshalJSON(t, p)
		checkJSONPod(t, d, raw) // fill the cache: damaged copies of these parts come next
		for cut := 0; cut < len(raw); cut += 1 + rnd.IntN(40) {
			checkJSONPod(t, d, raw[:cut])
		}
		for range 200 {
			damaged := bytes.Clone(raw)
			damaged[rnd.IntN(len(damaged))] = `{}[]",:\ a0`[rnd.IntN(11)]
			checkJSONPod(t, d, damaged)
		}
	}
}

// FuzzJSONParts: whatever the bytes, a pod decoded through the parts
// cache (cold, then warm) is encoding/json's pod, or its error.
func FuzzJSONParts(f *testing.F) {
	f.Add(marshalJSON(f, realpod.New(1)))
	f.Add(marshalJSON(f, allPartsPod()))
	f.Add([]byte(`{"metadata":{"labels":{"a":"1"},"labels":{"b":"2"}},"spec":{"Containers":[],"\u0063ontainers":[]}}`))
	f.Add([]byte(`{"spec":{"affinity":{"nodeAffinity":{}},"affinity":{"podAffinity":{}}},"metadata":null}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, drop := range []bool{false, true} {
			d := newJSONPartsTest(t, drop)
			checkJSONPod(t, d, raw)
			checkJSONPod(t, d, raw)
		}
	})
}

// A list page decodes item by item as encoding/json decodes it whole, and
// its items take parts from each other; lists of other shapes decode
// whole.
func TestJSONPartsDecodeLists(t *testing.T) {
	list := &corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}, ListMeta: metav1.ListMeta{ResourceVersion: "7", Continue: "next"}}
	for _, p := range partsPopulation(50) {
		list.Items = append(list.Items, *p)
	}
	pods := string(marshalJSON(t, list))
	cases := map[string]string{
		"pods":               pods,
		"no items":           string(marshalJSON(t, &corev1.PodList{ListMeta: list.ListMeta})),
		"empty items":        `{"metadata":{"resourceVersion":"3"},"items":[]}`,
		"null items":         `{"metadata":{"resourceVersion":"3"},"items":null}`,
		"items first":        `{"items":[{"metadata":{"name":"a","labels":{"x":"y"}}}],"metadata":{"resourceVersion":"3"}}`,
		"items twice":        `{"items":[{"metadata":{"name":"a"}}],"items":[{"spec":{"nodeName":"n"}}]}`,
		"other case items":   `{"ITEMS":[{"metadata":{"name":"a"}}]}`,
		"escaped items":      `{"\u0069tems":[{"metadata":{"name":"a"}}],"items":[{}]}`,
		"null item":          `{"items":[{"metadata":{"name":"a"}},null]}`,
		"odd item":           `{"items":[{"metadata":{"name":"a"}},{"spec":{"Containers":[]}}]}`,
		"bad item":           `{"items":[{"metadata":{"name":"a"}},{"spec":{"containers":5}}]}`,
		"scalar item":        `{"items":[{"metadata":{"name":"a"}},7]}`,
		"bad list metadata":  `{"metadata":{"resourceVersion":3},"items":[{}]}`,
		"trailing garbage":   pods + "]",
		"cut":                pods[:len(pods)/2],
		"whitespace":         " {\n \"items\" : [ {\"metadata\":{\"labels\":{\"a\":\"b\"}}} , {} ] , \"kind\" : \"PodList\" }\n",
		"realpod whitespace": strings.ReplaceAll(pods, `},{`, "} ,\n {"),
	}
	for _, drop := range []bool{false, true} {
		d := newJSONPartsTest(t, drop)
		for name, body := range cases {
			t.Run(fmt.Sprintf("%s/drop=%v", name, drop), func(t *testing.T) {
				var got corev1.PodList
				hits, err := d.decodeList([]byte(body), &got)
				var want corev1.PodList
				wantErr := json.Unmarshal([]byte(body), d.skip.jsonInto(&want))
				if wantErr != nil {
					require.Error(t, err)
					assert.Equal(t, wantErr.Error(), err.Error())
					return
				}
				require.NoError(t, err)
				require.True(t, reflect.DeepEqual(&want, &got))
				if hits != nil {
					assert.Len(t, hits, len(want.Items))
				}
				if name == "pods" {
					var n int
					for _, h := range hits {
						if h.has(partContainers) {
							n++
						}
					}
					assert.Greater(t, n, 30, "items take their containers from each other")
				}
			})
		}
	}
}

// The informer's whole JSON path, with the race detector as the judge, as
// TestSharedPartsAreNotWrittenAfterDelivery for protobuf: the interning
// and sharing run on each new pod must not write to a part an earlier pod
// holds. Decoding with hideParts disabled makes -race fail here.
func TestJSONSharedPartsAreNotWrittenAfterDelivery(t *testing.T) {
	tgt, err := newTarget(NewScheme(), podsResource.Kind, false)
	require.NoError(t, err)
	tgt.strings = &share.Table{Budget: share.StringsBudget}
	enc := newWireEncoder(rest.ContentTypeJSON)
	var stream []byte
	pods := partsPopulation(200)
	for _, p := range pods {
		stream = append(stream, enc.frame(t, watch.Modified, p)...)
	}
	c := reuse.New(func(string) (runtime.Object, bool) { return nil, false }, nil)
	lw := &ListerWatcher{opts: Options{Relist: c, Decoded: new(share.Table).Share, ShareParts: true}}
	jd := newJSONEventDecoder(bytes.NewReader(stream), rest.DefaultMaxFrameBytes, tgt)
	jd.withParts(newJSONPartsDecoder(tgt, lw.shareParts()))
	require.NotNil(t, jd.parts)
	dec := lw.reuseWatch(metav1.ListOptions{}, jd)

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
	var hits int
	for i := range pods {
		ev, err := dec.Next()
		require.NoError(t, err)
		got := ev.Object.(*corev1.Pod)
		var want corev1.Pod
		require.NoError(t, json.Unmarshal(marshalJSON(t, pods[i]), &want))
		want.APIVersion, want.Kind = "v1", "Pod"
		require.True(t, reflect.DeepEqual(&want, got), "pod %d", i)
		if jd.sharedParts(got).has(partContainers) {
			hits++
		}
		delivered <- got
	}
	close(delivered)
	wg.Wait()
	assert.Greater(t, hits, 100, "parts are shared")
}

// A part is handed on as its first pod holds it once that pod has been
// interned and shared (an equal value of the sharing table's may have
// replaced it), so that pods do not hold a second copy; a pod decoded
// again whole no longer lends its fields.
func TestPartsCacheHandsOnTheOwnersValue(t *testing.T) {
	var c partsCache
	raw := []byte(`[{"name":"a"}]`)
	owner := &corev1.Pod{}
	v, hit, err := c.take(partContainers, raw, owner, decodeJSONPart)
	require.NoError(t, err)
	require.False(t, hit)
	setPart(owner, partContainers, v)
	canonical := []corev1.Container{{Name: "a"}} // what share.Table put in its place
	owner.Spec.Containers = canonical
	got, hit, err := c.take(partContainers, raw, &corev1.Pod{}, decodeJSONPart)
	require.NoError(t, err)
	require.True(t, hit)
	assert.Same(t, &canonical[0], &got.([]corev1.Container)[0], "the owner's value, not a second copy")

	other := []byte(`[{"name":"b"}]`)
	owner = &corev1.Pod{}
	v, _, err = c.take(partContainers, other, owner, decodeJSONPart)
	require.NoError(t, err)
	c.disown(owner)
	*owner = corev1.Pod{} // decoded again, whole
	got, hit, err = c.take(partContainers, other, &corev1.Pod{}, decodeJSONPart)
	require.NoError(t, err)
	require.True(t, hit)
	assert.Equal(t, v, got, "a disowned part keeps its decoded value")
}
