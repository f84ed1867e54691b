package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer/internal/realpod"
	"github.com/seed31a95821/informer/internal/share"
	"github.com/seed31a95821/informer/rest"
)

// firstDiff names the first field where a and b differ (reflect.DeepEqual's
// notion), for a readable failure.
func firstDiff(path string, a, b reflect.Value) string {
	if !a.IsValid() || !b.IsValid() {
		if a.IsValid() != b.IsValid() {
			return path + ": validity"
		}
		return ""
	}
	if a.Type() != b.Type() {
		return path + ": type"
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return fmt.Sprintf("%s: nil %v vs %v", path, a.IsNil(), b.IsNil())
			}
			return ""
		}
		return firstDiff(path, a.Elem(), b.Elem())
	case reflect.Struct:
		if !a.CanInterface() {
			return ""
		}
		if qa, ok := a.Interface().(resource.Quantity); ok {
			qb := b.Interface().(resource.Quantity)
			if !reflect.DeepEqual(qa, qb) {
				return fmt.Sprintf("%s: quantity %s (format %s) vs %s (format %s)", path, qa.String(), qa.Format, qb.String(), qb.Format)
			}
			return ""
		}
		for i := range a.NumField() {
			if d := firstDiff(path+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Slice:
		if a.IsNil() != b.IsNil() {
			return fmt.Sprintf("%s: nil %v vs %v (len %d, %d)", path, a.IsNil(), b.IsNil(), a.Len(), b.Len())
		}
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: len %d vs %d", path, a.Len(), b.Len())
		}
		for i := range a.Len() {
			if d := firstDiff(fmt.Sprintf("%s[%d]", path, i), a.Index(i), b.Index(i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Map:
		if a.IsNil() != b.IsNil() {
			return fmt.Sprintf("%s: nil %v vs %v", path, a.IsNil(), b.IsNil())
		}
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: len %d vs %d", path, a.Len(), b.Len())
		}
		for _, k := range a.MapKeys() {
			if d := firstDiff(fmt.Sprintf("%s[%v]", path, k), a.MapIndex(k), b.MapIndex(k)); d != "" {
				return d
			}
		}
		return ""
	}
	if !a.CanInterface() {
		return ""
	}
	if !reflect.DeepEqual(a.Interface(), b.Interface()) {
		return fmt.Sprintf("%s: %#v vs %#v", path, a.Interface(), b.Interface())
	}
	return ""
}

// jsonPodMutations are byte edits of a realpod pod's JSON: each keeps
// it valid, some change a part's value, some only its spelling, some make
// it a shape the parts decoder refuses.
var jsonPodMutations = [][2]string{
	{`"cpu":"250m"`, `"cpu":"0.25"`},                                  // non-canonical quantity
	{`"memory":"256Mi"`, `"memory":"268435456"`},                      // same value, other format
	{`"args":["proxy"`, `"command":[],"args":["proxy"`},               // an empty list inside an element
	{`"ports":[{"name":"http"`, `"ports":[],"ports":[{"name":"http"`}, // a repeated key inside a part
	{`"tolerations":[`, `"tolerations":null,"tolerations":[`},         // a repeated part key: split refused
	{`"tier":"backend"`, `"tier":"backend","TIER":"x"`},               // map keys differing in case
	{`"containers":[`, `"containers": [`},                             // spelling only
	{`"securityContext":{}`, `"securityContext":{"runAsUser":null}`},
	{`"securityContext":{}`, `"securityContext":{},"SecurityContext":{"runAsUser":1}`},
	{`"labels":{`, `"labels":{},"labels":{`},
	{`"env":[`, `"env":null,"env":[`},
	{`"volumes":[`, `"volumes":[{"name":"x","emptyDir":{}}],"Volumes":[`},
	{`"image":"registry.example.com/mesh/proxy:2.8.1"`, `"image":"registry.example.com/mesh/proxy:2.8.\u0031"`},
	{`"ownerReferences":[`, `"ownerReferences":[],"ownerReferences":[`},
}

// A JSON watch stream of realpod pods, mutated at random, decoded as an
// informer decodes it (interning and sharing after each pod) gives the
// same pods whether frames are read whole and parts cached or not, and a
// pod delivered earlier is not changed by the pods decoded after it.
// (Both differ from encoding/json's pods exactly where the share table's
// documented leeway allows: nil and empty lists inside an element, a
// quantity's representation; the count is logged.)
func TestJSONPipelineSameWithPartsAndFramesOrWithout(t *testing.T) {
	seeds, n := uint64(2), 150
	if testing.Short() {
		seeds, n = 1, 100
	}
	for seed := range seeds {
		rnd := rand.New(rand.NewPCG(seed, 7))
		enc := newWireEncoder(rest.ContentTypeJSON)
		var stream []byte
		var objects [][]byte
		for i := range n {
			p := realpod.New(rnd.IntN(40))
			p.ResourceVersion = fmt.Sprint(100 + i)
			raw := enc.object(t, p)
			for range rnd.IntN(3) {
				m := jsonPodMutations[rnd.IntN(len(jsonPodMutations))]
				raw = bytes.Replace(raw, []byte(m[0]), []byte(m[1]), 1)
			}
			raw = bytes.TrimRight(raw, "\n")
			objects = append(objects, raw)
			stream = append(stream, enc.rawFrame(t, string(watch.Modified), raw)...)
		}
		var runs [2][]*corev1.Pod
		for r, parts := range []bool{false, true} {
			tgt, err := newTarget(NewScheme(), podsResource.Kind, false)
			require.NoError(t, err)
			tgt.strings = &share.Table{Budget: share.StringsBudget}
			table := new(share.Table)
			lw := &ListerWatcher{opts: Options{Decoded: table.Share, ShareParts: parts}}
			jd := newJSONEventDecoder(bytes.NewReader(stream), rest.DefaultMaxFrameBytes, tgt)
			jd.withParts(newJSONPartsDecoder(tgt, parts))
			dec := lw.reuseWatch(metav1.ListOptions{}, jd)
			var snap []*corev1.Pod
			differ := 0
			for i := range n {
				ev, err := dec.Next()
				require.NoError(t, err)
				p := ev.Object.(*corev1.Pod)
				var want corev1.Pod
				require.NoError(t, json.Unmarshal(objects[i], &want))
				want.APIVersion, want.Kind = "v1", "Pod"
				if !reflect.DeepEqual(&want, p) {
					differ++
				}
				require.True(t, apiequality.Semantic.DeepEqual(&want, p), "seed %d pod %d", seed, i)
				runs[r] = append(runs[r], p)
				snap = append(snap, p.DeepCopy())
			}
			for i, p := range runs[r] {
				require.True(t, reflect.DeepEqual(snap[i], p), "seed %d parts %v: pod %d changed after delivery: %s", seed, parts, i, firstDiff("pod", reflect.ValueOf(snap[i]), reflect.ValueOf(p)))
			}
			t.Logf("seed %d parts %v: %d of %d pods differ from encoding/json's by reflect.DeepEqual", seed, parts, differ, n)
		}
		for i := range runs[0] {
			require.True(t, reflect.DeepEqual(runs[0][i], runs[1][i]), "seed %d pod %d: %s", seed, i, firstDiff("pod", reflect.ValueOf(runs[0][i]), reflect.ValueOf(runs[1][i])))
		}
	}
}

// The same without interning and sharing: the parts decoder alone must
// give exactly encoding/json's pod.
func TestJSONPartsDecoderGivesEncodingJSONsPod(t *testing.T) {
	seeds := uint64(3)
	if testing.Short() {
		seeds = 2
	}
	for seed := range seeds {
		rnd := rand.New(rand.NewPCG(seed, 9))
		d := newJSONPartsTest(t, seed%2 == 1)
		enc := newWireEncoder(rest.ContentTypeJSON)
		for i := range 300 {
			p := realpod.New(rnd.IntN(40))
			p.ResourceVersion = fmt.Sprint(100 + i)
			raw := enc.object(t, p)
			for range rnd.IntN(3) {
				m := jsonPodMutations[rnd.IntN(len(jsonPodMutations))]
				raw = bytes.Replace(raw, []byte(m[0]), []byte(m[1]), 1)
			}
			checkJSONPod(t, d, bytes.TrimRight(raw, "\n"))
		}
	}
}

// Protobuf streams decoded concurrently (one per namespace, as a scoped
// informer runs them) against one share table: each pod is the generated
// Unmarshal's, and no pod changes after delivery. Run with -race.
func TestProtobufStreamsShareOneTableSafely(t *testing.T) {
	table := new(share.Table)
	const streams = 3
	var wg sync.WaitGroup
	errs := make([]string, streams)
	hits := make([]int, streams)
	for s := range streams {
		wg.Go(func() {
			tgt, err := newTarget(NewScheme(), podsResource.Kind, false)
			if err != nil {
				errs[s] = err.Error()
				return
			}
			tgt.strings = &share.Table{Budget: share.StringsBudget}
			tgt.parts = table
			rnd := rand.New(rand.NewPCG(uint64(s), 3))
			enc := newWireEncoder(rest.ContentTypeProtobuf)
			var stream []byte
			var raws [][]byte
			n := 300
			for i := range n {
				p := realpod.Mixed(rnd.IntN(60))
				p.ResourceVersion = fmt.Sprint(100 + i)
				switch rnd.IntN(6) {
				case 0:
					p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("0.25")
				case 1:
					p.Spec.Containers[0].Args = []string{}
				case 2:
					p.Labels["extra"] = strings.Repeat("x", rnd.IntN(3))
				case 3:
					p.Spec.NodeSelector = map[string]string{"zone": "a", "": ""}
				}
				raw, err := p.Marshal()
				if err != nil {
					errs[s] = err.Error()
					return
				}
				raws = append(raws, raw)
				stream = append(stream, enc.frame(t, watch.Modified, p)...)
			}
			lw := &ListerWatcher{opts: Options{Decoded: table.Share, ShareParts: true}}
			pd := newProtobufEventDecoder(bytes.NewReader(stream), rest.DefaultMaxFrameBytes, tgt)
			pd.objects = newProtoDecoder(tgt, true)
			dec := lw.reuseWatch(metav1.ListOptions{}, pd)
			var got, snap []*corev1.Pod
			for i := range n {
				ev, err := dec.Next()
				if err != nil {
					errs[s] = err.Error()
					return
				}
				p := ev.Object.(*corev1.Pod)
				want, _ := generated(raws[i], false)
				want.APIVersion, want.Kind = "v1", "Pod"
				if !reflect.DeepEqual(want, p) {
					errs[s] += fmt.Sprintf("stream %d pod %d: %s\n", s, i, firstDiff("pod", reflect.ValueOf(want), reflect.ValueOf(p)))
				}
				if pd.lastHits != 0 {
					hits[s]++
				}
				got = append(got, p)
				snap = append(snap, p.DeepCopy())
			}
			for i := range got {
				if !reflect.DeepEqual(snap[i], got[i]) {
					errs[s] += fmt.Sprintf("stream %d pod %d changed after delivery\n", s, i)
				}
			}
		})
	}
	wg.Wait()
	t.Logf("pods that shared a part, per stream: %v", hits)
	for _, e := range errs {
		if e != "" {
			t.Log(e)
		}
	}
	for _, e := range errs {
		require.Empty(t, e)
	}
}

// FuzzTablePartsEqualUnmarshal: whatever the bytes of a pod, its parts found in a
// share table (which holds realpod's parts, interned and shared as an
// informer keeps them) give the pod the generated Unmarshal gives.
func FuzzTablePartsEqualUnmarshal(f *testing.F) {
	table := new(share.Table)
	strs := &share.Table{Budget: share.StringsBudget}
	var keep []*corev1.Pod // the table holds its values weakly
	for i := range 40 {
		p := realpod.Mixed(i)
		if i%7 == 0 {
			p = allPartsPod()
		}
		raw, err := p.Marshal()
		require.NoError(f, err)
		q, err := generated(raw, false)
		require.NoError(f, err)
		strs.Strings(q)
		table.Share(q)
		keep = append(keep, q)
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		want, wantErr := generated(raw, false)
		c := &partsCache{table: table}
		var got corev1.Pod
		hits, ok := c.decodePod(raw, &got, false)
		if !ok {
			return // decoded whole, by the generated Unmarshal
		}
		require.NoError(t, wantErr)
		if !reflect.DeepEqual(want, &got) {
			t.Fatalf("%s", firstDiff("pod", reflect.ValueOf(want), reflect.ValueOf(&got)))
		}
		if testing.Verbose() {
			t.Logf("parts found: %b", hits)
		}
	})
	runtime.KeepAlive(keep)
}

// mutate returns raw with a few random edits: a byte changed, a range
// repeated, a range dropped.
func mutateBytes(rnd *rand.Rand, raw []byte, alphabet string) []byte {
	b := bytes.Clone(raw)
	for range 1 + rnd.IntN(3) {
		if len(b) < 2 {
			return b
		}
		i := rnd.IntN(len(b))
		j := i + rnd.IntN(min(64, len(b)-i))
		switch rnd.IntN(4) {
		case 0:
			if alphabet != "" {
				b[i] = alphabet[rnd.IntN(len(alphabet))]
			} else {
				b[i] = byte(rnd.Uint32())
			}
		case 1:
			b = append(b[:j:j], append(bytes.Clone(b[i:j]), b[j:]...)...)
		case 2:
			b = append(b[:i:i], b[j:]...)
		case 3:
			b[i] ^= 1 << rnd.IntN(8)
		}
	}
	return b
}

// Random byte-level mutations of realpod pods' protobuf, decoded through
// a parts cache that also looks in a share table of realpod's parts (a
// fresh cache, and one warm from earlier mutants), give the generated
// Unmarshal's pod, or fall back to it.
func TestProtobufMutantsDecodeAsUnmarshal(t *testing.T) {
	table := new(share.Table)
	strs := &share.Table{Budget: share.StringsBudget}
	var keep []*corev1.Pod
	var raws [][]byte
	for i := range 40 {
		p := realpod.Mixed(i)
		if i%7 == 0 {
			p = allPartsPod()
		}
		raw, err := p.Marshal()
		require.NoError(t, err)
		q, err := generated(raw, false)
		require.NoError(t, err)
		strs.Strings(q)
		table.Share(q)
		keep = append(keep, q)
		raws = append(raws, raw)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	warm := &protoDecoder{parts: &partsCache{table: table, strs: strs}}
	n, found := 5000, 0
	if testing.Short() {
		n = 2000
	}
	for range n {
		raw := mutateBytes(rnd, raws[rnd.IntN(len(raws))], "")
		want, wantErr := generated(raw, false)
		for _, d := range []*protoDecoder{{parts: &partsCache{table: table}}, {parts: &partsCache{table: table, strs: strs}}, warm} {
			var got corev1.Pod
			hits, err := d.decode(raw, &got)
			if wantErr != nil {
				require.Error(t, err)
				continue
			}
			require.NoError(t, err)
			if hits != 0 {
				found++
			}
			if !reflect.DeepEqual(want, &got) {
				t.Fatalf("%s\n%x", firstDiff("pod", reflect.ValueOf(want), reflect.ValueOf(&got)), raw)
			}
		}
	}
	t.Logf("%d decodes shared a part", found)
	runtime.KeepAlive(keep)
}

// Random mutations of JSON watch streams of realpod pods: reading frames
// whole with parts gives the json.Decoder's events, offsets and error.
func TestJSONStreamMutantsReadAsTheDecoderReads(t *testing.T) {
	stream := jsonFrameStream(t, 6)
	rnd := rand.New(rand.NewPCG(3, 4))
	n := 200
	if testing.Short() {
		n = 100
	}
	for i := range n {
		s := mutateBytes(rnd, stream, `{}[]",:\ a0nul`)
		if i%2 == 0 {
			for range 3 {
				m := jsonPodMutations[rnd.IntN(len(jsonPodMutations))]
				s = bytes.Replace(s, []byte(m[0]), []byte(m[1]), 1)
			}
		}
		max := int64(rest.DefaultMaxFrameBytes)
		if i%5 == 0 {
			max = int64(1000 + rnd.IntN(6000))
		}
		requireSameRun(t, s, max, func(r io.Reader) io.Reader { return &chunkReader{r: r, n: 1 + rnd.IntN(5000)} })
	}
}

// Random mutations of realpod pods' JSON through the parts decoder, a cold
// one and a warm one: encoding/json's pod or error.
func TestJSONPodMutantsDecodeAsEncodingJSON(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	enc := newWireEncoder(rest.ContentTypeJSON)
	var raws [][]byte
	for i := range 40 {
		raws = append(raws, bytes.TrimRight(enc.object(t, realpod.Mixed(i)), "\n"))
	}
	raws = append(raws, marshalJSON(t, allPartsPod()))
	warm := newJSONPartsTest(t, false)
	n := 600
	if testing.Short() {
		n = 300
	}
	for range n {
		raw := mutateBytes(rnd, raws[rnd.IntN(len(raws))], `{}[]",:\ a0nulAL`)
		checkJSONPod(t, newJSONPartsTest(t, false), raw)
		checkJSONPod(t, warm, raw)
	}
}
