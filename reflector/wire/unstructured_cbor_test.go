package wire

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
	"k8s.io/apimachinery/pkg/watch"
)

var gizmoKind = schema.GroupVersionKind{Group: "x", Version: "v1", Kind: "Gizmo"}

// cborObject encodes v as the API server does: the self-described tag,
// then the item.
func cborObject(t *testing.T, v any) []byte {
	t.Helper()
	b, err := direct.Marshal(v)
	require.NoError(t, err)
	return append([]byte{0xd9, 0xd9, 0xf7}, b...)
}

func cborEvent(t *testing.T, typ watch.EventType, obj map[string]any) []byte {
	t.Helper()
	return cborObject(t, metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: cborObject(t, obj)}})
}

func gizmoMap(name string, replicas int64) map[string]any {
	return map[string]any{"apiVersion": "x/v1", "kind": "Gizmo",
		"metadata": map[string]any{"name": name}, "spec": map[string]any{"replicas": replicas}}
}

// A CBOR watch stream is decoded frame by frame into unstructured
// objects, integers as int64; its end between frames is a clean EOF.
func TestCBOREventDecoder(t *testing.T) {
	var stream bytes.Buffer
	stream.Write(cborEvent(t, watch.Added, gizmoMap("a", 3)))
	stream.Write(cborEvent(t, watch.Modified, gizmoMap("a", 4)))
	d := mustCBORDecoder(t, &stream, 1<<20, newUnstructuredTarget(gizmoKind, false))
	for _, want := range []struct {
		typ      watch.EventType
		replicas int64
	}{{watch.Added, 3}, {watch.Modified, 4}} {
		ev, err := d.Next()
		require.NoError(t, err)
		assert.Equal(t, want.typ, ev.Type)
		u := ev.Object.(*unstructured.Unstructured)
		assert.Equal(t, gizmoKind, u.GroupVersionKind())
		assert.Equal(t, want.replicas, u.Object["spec"].(map[string]any)["replicas"])
	}
	_, err := d.Next()
	assert.Equal(t, io.EOF, err)
}

// Frames are bounded and checked as JSON ones are: too large, cut, or of
// another kind.
func TestCBOREventDecoderFaults(t *testing.T) {
	big := cborEvent(t, watch.Added, map[string]any{"apiVersion": "x/v1", "kind": "Gizmo", "pad": string(make([]byte, 4096))})
	d := mustCBORDecoder(t, bytes.NewReader(big), 1024, newUnstructuredTarget(gizmoKind, false))
	_, err := d.Next()
	var fe *FrameError
	require.ErrorAs(t, err, &fe)
	assert.ErrorIs(t, fe.Kind, ErrFrameTooLarge)

	frame := cborEvent(t, watch.Added, gizmoMap("a", 1))
	d = mustCBORDecoder(t, bytes.NewReader(frame[:len(frame)-3]), 1<<20, newUnstructuredTarget(gizmoKind, false))
	_, err = d.Next()
	require.ErrorAs(t, err, &fe)
	assert.ErrorIs(t, fe.Kind, ErrTruncatedFrame)

	other := cborEvent(t, watch.Added, map[string]any{"apiVersion": "x/v1", "kind": "Widget"})
	d = mustCBORDecoder(t, bytes.NewReader(other), 1<<20, newUnstructuredTarget(gizmoKind, false))
	ev, err := d.Next()
	require.NoError(t, err)
	assert.IsType(t, &runtime.Unknown{}, ev.Object, "an object of another kind is not handed on as ours")

	d = mustCBORDecoder(t, bytes.NewReader([]byte{0xd9, 0xd9, 0xf7, 0x01}), 1<<20, newUnstructuredTarget(gizmoKind, false))
	_, err = d.Next()
	require.ErrorAs(t, err, &fe)
	assert.True(t, errors.Is(fe.Kind, ErrMalformedFrame), "%v", err)
}

// A CBOR list's items are counted from the head of its array, before any
// is decoded.
func TestCBORItemCount(t *testing.T) {
	items := []any{map[string]any{}, map[string]any{}, map[string]any{}}
	body := cborObject(t, map[string]any{"apiVersion": "x/v1", "kind": "GizmoList", "metadata": map[string]any{}, "items": items})
	n, err := countCBORItems(body)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	assert.ErrorIs(t, checkItemCount("application/cbor", body, 2), ErrTooManyItems)
	assert.NoError(t, checkItemCount("application/cbor", body, 3))

	_, err = countCBORItems(cborObject(t, map[string]any{"items": "no"}))
	assert.Error(t, err)
	indefinite := append([]byte{0xd9, 0xd9, 0xf7, 0xa1, 0x65}, "items"...)
	indefinite = append(indefinite, 0x9f, 0xa0, 0xff)
	_, err = countCBORItems(indefinite)
	assert.Error(t, err)

	var list unstructured.UnstructuredList
	apiVersion, kind, err := newUnstructuredTarget(gizmoKind, false).decodeListBody("application/cbor", body, &list)
	require.NoError(t, err)
	assert.Equal(t, "x/v1", apiVersion)
	assert.Equal(t, "GizmoList", kind)
	assert.Len(t, list.Items, 3)
}

func mustCBORDecoder(t *testing.T, r io.Reader, maxFrame int64, tgt *target) *cborEventDecoder {
	t.Helper()
	d, err := newCBOREventDecoder(r, maxFrame, tgt)
	require.NoError(t, err)
	return d
}
