package wire

import (
	"bytes"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer/internal/realpod"
	"github.com/seed31a95821/informer/internal/reuse"
	"github.com/seed31a95821/informer/internal/share"
	"github.com/seed31a95821/informer/rest"
)

// BenchmarkWatchDecodeParts measures one watch event of realpod's pods
// (deployments of ten replicas, about 7 KB of JSON each) through the whole
// decode path of an informer whose Transform is none or
// StripManagedFields: decode, intern, share (reuse.Cache.Prepare). Rows:
//
//	generated   every pod decoded whole by its generated Unmarshal (JSON:
//	            encoding/json), managedFields kept
//	drop        managedFields skipped while decoding (DropManagedFields)
//	parts       a pod's repeated parts decoded once per stream
//	            (protobuf_parts.go, json_parts.go)
//	parts+drop  both
//
// Run: go test -run '^$' -bench WatchDecodeParts -benchmem ./reflector/wire/
func BenchmarkWatchDecodeParts(b *testing.B) {
	const n = 1000
	for _, mt := range mediaTypes {
		enc := newWireEncoder(mt)
		var stream []byte
		for i := range n {
			p := realpod.New(i)
			p.ResourceVersion = strconv.Itoa(1000 + i)
			stream = append(stream, enc.frame(b, watch.Modified, p)...)
		}
		name := map[string]string{rest.ContentTypeJSON: "json", rest.ContentTypeProtobuf: "protobuf"}[mt]
		for _, v := range []struct {
			name        string
			drop, parts bool
		}{{"generated", false, false}, {"drop", true, false}, {"parts", false, true}, {"parts+drop", true, true}} {
			b.Run(name+"/"+v.name, func(b *testing.B) {
				benchDecodePath(b, mt, stream, n, v.drop, v.parts)
			})
		}
	}
}

func benchDecodePath(b *testing.B, mediaType string, stream []byte, n int, drop, parts bool) {
	tgt, table := benchPodTarget(b, drop, parts)
	b.SetBytes(int64(len(stream) / n))
	b.ReportAllocs()
	defer reportCPU(b)()
	var dec eventDecoder
	// The objects are held as an informer's cache holds them, the last n:
	// the share table holds its values weakly.
	held := make([]runtime.Object, n)
	for i := 0; b.Loop(); i++ {
		if i%n == 0 {
			c := reuse.New(func(string) (runtime.Object, bool) { return nil, false }, nil)
			lw := &ListerWatcher{opts: Options{Relist: c, Decoded: table.Share}}
			if mediaType == rest.ContentTypeJSON {
				jd := newJSONEventDecoder(bytes.NewReader(stream), rest.DefaultMaxFrameBytes, tgt)
				jd.withParts(newJSONPartsDecoder(tgt, parts))
				dec = jd
			} else {
				pd := newProtobufEventDecoder(bytes.NewReader(stream), rest.DefaultMaxFrameBytes, tgt)
				pd.objects = newProtoDecoder(tgt, parts)
				dec = pd
			}
			dec = lw.reuseWatch(metav1.ListOptions{}, dec)
		}
		ev, err := dec.Next()
		if err != nil || ev.Type != watch.Modified {
			b.Fatalf("event %d: %v %v", i, ev.Type, err)
		}
		if p := ev.Object.(*corev1.Pod); drop && p.ManagedFields != nil {
			b.Fatal("managedFields kept")
		}
		held[i%n] = ev.Object
	}
}

// BenchmarkListDecodeParts is BenchmarkWatchDecodeParts for a list page of
// 500 pods (the reflector's page size), reported per pod.
//
// Run: go test -run '^$' -bench ListDecodeParts -benchmem ./reflector/wire/
func BenchmarkListDecodeParts(b *testing.B) {
	const n = 500
	list := &corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}}
	for i := range n {
		p := realpod.New(i)
		p.ResourceVersion = strconv.Itoa(1000 + i)
		list.Items = append(list.Items, *p)
	}
	for _, mt := range mediaTypes {
		body := newWireEncoder(mt).object(b, list)
		name := map[string]string{rest.ContentTypeJSON: "json", rest.ContentTypeProtobuf: "protobuf"}[mt]
		for _, v := range []struct {
			name        string
			drop, parts bool
		}{{"generated", false, false}, {"drop", true, false}, {"parts", false, true}, {"parts+drop", true, true}} {
			b.Run(name+"/"+v.name, func(b *testing.B) {
				benchDecodeList(b, mt, body, n, v.drop, v.parts)
			})
		}
	}
}

func benchDecodeList(b *testing.B, mediaType string, body []byte, n int, drop, parts bool) {
	tgt, table := benchPodTarget(b, drop, parts)
	c := reuse.New(func(string) (runtime.Object, bool) { return nil, false }, nil)
	lw := &ListerWatcher{opts: Options{Relist: c, Decoded: table.Share}}
	b.ReportAllocs()
	cpu0 := processCPU(b)
	for b.Loop() {
		got, hits, err := tgt.decodeListWith(mediaType, body, newProtoDecoder(tgt, parts), newJSONPartsDecoder(tgt, parts))
		if err != nil || len(got.(*corev1.PodList).Items) != n {
			b.Fatal(err)
		}
		lw.reuseListItems(metav1.ListOptions{}, got, hits)
	}
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N)/float64(n), "cpu-ns/pod")
}

// BenchmarkWatchDecodePartsChurn is BenchmarkWatchDecodeParts for the
// events of a random-order churn (realpod.ChurnOrder, realpod.Restarted):
// every pod of 10,000 updated once, so that the pods of one template come
// far apart and the bounded parts cache meets most parts after it has
// forgotten them. The compare command's churn row is this regime.
//
// Run: go test -run '^$' -bench WatchDecodePartsChurn -benchmem ./reflector/wire/
func BenchmarkWatchDecodePartsChurn(b *testing.B) {
	const n = 10_000
	for _, mt := range mediaTypes {
		enc := newWireEncoder(mt)
		var stream []byte
		at := time.Unix(1_700_000_000, 0)
		for _, i := range realpod.ChurnOrder(n, 1) {
			p := realpod.Restarted(realpod.New(i), i, 1, at)
			p.Annotations["bench.informer/written-at"] = strconv.Itoa(i) // as compare stamps each write
			p.ResourceVersion = strconv.Itoa(20_000 + i)
			stream = append(stream, enc.frame(b, watch.Modified, p)...)
		}
		name := map[string]string{rest.ContentTypeJSON: "json", rest.ContentTypeProtobuf: "protobuf"}[mt]
		for _, v := range []struct {
			name  string
			parts bool
		}{{"generated", false}, {"parts", true}} {
			b.Run(name+"/"+v.name, func(b *testing.B) {
				benchDecodePath(b, mt, stream, n, false, v.parts)
			})
		}
	}
}

// benchPodTarget is the pods target the decode benchmarks share: strings
// interned, managedFields dropped when drop, parts found in the returned
// share table when parts.
func benchPodTarget(b *testing.B, drop, parts bool) (*target, *share.Table) {
	tgt, err := newTarget(NewScheme(), podsResource.Kind, false)
	if err != nil {
		b.Fatal(err)
	}
	tgt.strings = &share.Table{Budget: share.StringsBudget}
	if drop {
		tgt.dropManagedFields = true
		tgt.jsonSkip = newJSONSkip(tgt.itemType, tgt.listType)
	}
	table := new(share.Table)
	if parts {
		tgt.parts = table
	}
	return tgt, table
}

// BenchmarkWatchListFirstSync measures one ADDED event of a protobuf
// WatchList at an informer's first sync (realpod's pods, in template order
// as the server lists them) through the whole decode path: parts shared,
// strings interned, Decoded sharing, and a Relist cache that holds nothing.
// Rows: the cache says it is empty (Begin false: no object is looked up),
// or its size is unknown (every object's identity is read and asked for).
//
//	go test -run '^$' -bench WatchListFirstSync -benchmem ./reflector/wire/
func BenchmarkWatchListFirstSync(b *testing.B) {
	const n = 1000
	enc := newWireEncoder(rest.ContentTypeProtobuf)
	var stream []byte
	for i := range n {
		p := realpod.New(i)
		p.ResourceVersion = strconv.Itoa(1000 + i)
		stream = append(stream, enc.frame(b, watch.Added, p)...)
	}
	yes := true
	opts := metav1.ListOptions{SendInitialEvents: &yes}
	for _, empty := range []bool{true, false} {
		b.Run(map[bool]string{true: "empty", false: "unknown"}[empty], func(b *testing.B) {
			tgt, table := benchPodTarget(b, false, true)
			var size func() int
			if empty {
				size = func() int { return 0 }
			}
			b.SetBytes(int64(len(stream) / n))
			b.ReportAllocs()
			defer reportCPU(b)()
			var dec eventDecoder
			held := make([]runtime.Object, n) // as the informer's cache holds them
			for i := 0; b.Loop(); i++ {
				if i%n == 0 {
					c := reuse.New(func(string) (runtime.Object, bool) { return nil, false }, size)
					lw := &ListerWatcher{opts: Options{Relist: c, Decoded: table.Share, ShareParts: true}}
					pd := newProtobufEventDecoder(bytes.NewReader(stream), rest.DefaultMaxFrameBytes, tgt)
					pd.objects = newProtoDecoder(tgt, true)
					dec = lw.reuseWatch(opts, pd)
				}
				ev, err := dec.Next()
				if err != nil || ev.Type != watch.Added {
					b.Fatalf("event %d: %v %v", i, ev.Type, err)
				}
				held[i%n] = ev.Object
			}
		})
	}
}
