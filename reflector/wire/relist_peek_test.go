package wire

import (
	"bytes"
	"testing"

	"github.com/seed31a95821/informer/rest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// In a protobuf WatchList made with a cache, an ADDED object the cache
// holds unchanged is recognised from its metadata alone and not decoded:
// a handful of allocations instead of the pod's hundreds. One with another
// resourceVersion is decoded as usual.
func TestProtobufWatchListSkipsDecodingUnchangedObjects(t *testing.T) {
	tgt, err := newTarget(NewScheme(), podsResource.Kind, false)
	require.NoError(t, err)
	enc := newWireEncoder(rest.ContentTypeProtobuf)
	cached := benchPod(1)
	changed := benchPod(1)
	changed.ResourceVersion += "0"
	unchanged := func(obj runtime.Object) runtime.Object {
		m, err := meta.Accessor(obj)
		require.NoError(t, err)
		if m.GetNamespace() == cached.Namespace && m.GetName() == cached.Name &&
			m.GetUID() == cached.UID && m.GetResourceVersion() == cached.ResourceVersion {
			return cached
		}
		return nil
	}
	decode := func(frame []byte) watch.Event {
		d := newProtobufEventDecoder(bytes.NewReader(frame), rest.DefaultMaxFrameBytes, tgt)
		d.unchanged = unchanged
		ev, err := d.Next()
		require.NoError(t, err)
		return ev
	}

	same := enc.frame(t, watch.Added, benchPod(1))
	assert.Same(t, cached, decode(same).Object)
	allocs := testing.AllocsPerRun(100, func() { decode(same) })
	assert.Less(t, allocs, 20.0, "an unchanged pod is not decoded")

	ev := decode(enc.frame(t, watch.Added, changed))
	require.IsType(t, &corev1.Pod{}, ev.Object)
	assert.NotSame(t, cached, ev.Object)
	assert.Equal(t, changed.ResourceVersion, ev.Object.(*corev1.Pod).ResourceVersion)
	assert.Equal(t, changed.Spec, ev.Object.(*corev1.Pod).Spec)
	decodedAllocs := testing.AllocsPerRun(100, func() { decode(enc.frame(t, watch.Added, changed)) })
	assert.Greater(t, decodedAllocs, 5*allocs, "a changed pod is decoded in full")

	modified := decode(enc.frame(t, watch.Modified, benchPod(1)))
	assert.NotSame(t, cached, modified.Object, "only ADDED objects of a WatchList are looked up")
}

// A frame whose metadata does not parse is decoded as usual, so that the
// decoder, not the peek, reports it.
func TestPeekUnchangedLeavesMalformedObjectsToTheDecoder(t *testing.T) {
	asked := false
	look := func(runtime.Object) runtime.Object { asked = true; return &corev1.Pod{} }
	assert.Nil(t, peekUnchanged([]byte{0x0a, 0x05, 0x0a}, look), "truncated metadata")
	assert.Nil(t, peekUnchanged([]byte{0x0a, 0x02, 0x0a, 0x00}, look), "no uid or resourceVersion")
	assert.False(t, asked)
}

// What a protobuf WatchList costs per unchanged pod, recognised from its
// metadata (peek) or decoded in full only to be dropped (decode), as
// before peekUnchanged.
//
//	go test -run '^$' -bench WatchListUnchanged ./reflector/wire/
func BenchmarkWatchListUnchanged(b *testing.B) {
	tgt, err := newTarget(NewScheme(), podsResource.Kind, false)
	if err != nil {
		b.Fatal(err)
	}
	enc := newWireEncoder(rest.ContentTypeProtobuf)
	var stream []byte
	cached := map[string]runtime.Object{}
	for i := range benchEvents {
		p := benchPod(i)
		stream = append(stream, enc.frame(b, watch.Added, p)...)
		cached[p.Namespace+"/"+p.Name] = p
	}
	unchanged := func(obj runtime.Object) runtime.Object {
		m, _ := meta.Accessor(obj)
		c, ok := cached[m.GetNamespace()+"/"+m.GetName()]
		if !ok || c.(*corev1.Pod).ResourceVersion != m.GetResourceVersion() {
			return nil
		}
		return c
	}
	for _, peek := range []bool{true, false} {
		b.Run(map[bool]string{true: "peek", false: "decode"}[peek], func(b *testing.B) {
			b.ReportAllocs()
			var d *protobufEventDecoder
			for i := 0; b.Loop(); i++ {
				if i%benchEvents == 0 {
					d = newProtobufEventDecoder(bytes.NewReader(stream), rest.DefaultMaxFrameBytes, tgt)
					if peek {
						d.unchanged = unchanged
					}
				}
				if _, err := d.Next(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
