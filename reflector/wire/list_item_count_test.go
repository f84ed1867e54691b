package wire

import (
	"bytes"
	"context"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/seed31a95821/informer/internal/testserver"
	"github.com/seed31a95821/informer/rest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
)

func TestCountJSONItems(t *testing.T) {
	tests := []struct {
		name string
		body string
		want int
	}{
		{"no items", `{"kind":"PodList","metadata":{}}`, 0},
		{"empty items", `{"items":[]}`, 0},
		{"empty items with blanks", `{"items":[ ` + "\n\t" + ` ]}`, 0},
		{"null items", `{"items":null}`, 0},
		{"one", `{"items":[{}]}`, 1},
		{"three, with blanks", `{"items": [ {} , {"a":1},` + "\n" + `{} ]}`, 3},
		{"nested arrays do not count", `{"items":[{"spec":{"containers":[{},{},{}]}},{"x":[[1,2],[3]]}]}`, 2},
		{"arrays in metadata do not count", `{"metadata":{"x":[1,2,3]},"items":[{}]}`, 1},
		{"brackets and commas in strings", `{"items":[{"a":"],[{,"},{"b":"\"],["}]}`, 2},
		{"escaped backslash before a quote", `{"items":[{"a":"\\"},{"b":"x\\\\"},{}]}`, 3},
		{"a string element", `{"items":["a,b",""]}`, 2},
		{"another key's case: counted too", `{"ITEMS":[{},{}]}`, 2},
		{"every top-level array counts", `{"items":[{}],"other":[1,2]}`, 3},
		{"null elements count", `{"items":[null,null]}`, 2},
		{"numbers count", `{"items":[1,2,3]}`, 3},
		{"unterminated string", `{"items":[{},"abc`, 2},
		{"unbalanced", `]]]}}}{"items":[{}]`, 0},
		{"not an object", `[{},{},{}]`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, countJSONItems([]byte(tt.body), 100))
		})
	}
	body := emptyItemsJSON(1000)
	assert.Equal(t, 1000, countJSONItems(body, 1000))
	assert.Equal(t, 11, countJSONItems(body, 10), "stops once past the cap")
}

func TestCountProtobufItems(t *testing.T) {
	enc := newWireEncoder(rest.ContentTypeProtobuf)
	body := enc.object(t, testPodList("1", "next", 3))
	n, err := countProtobufItems(body, 100)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	n, err = countProtobufItems(body, 1)
	require.NoError(t, err)
	assert.Equal(t, 2, n, "stops once past the cap")

	n, err = countProtobufItems(emptyItemsProtobuf(t, 1000), 2000)
	require.NoError(t, err)
	assert.Equal(t, 1000, n)

	_, err = countProtobufItems([]byte("not protobuf"), 10)
	assert.Error(t, err)
	// A group (wire type 3), which walkProto does not follow but the
	// generated Unmarshal would skip: refused, not left uncounted.
	group := emptyItemsProtobufRaw(t, []byte{3<<3 | 3, 3<<3 | 4})
	_, err = countProtobufItems(group, 10)
	assert.Error(t, err)
	assert.ErrorIs(t, checkItemCount(rest.ContentTypeProtobuf, append(group, make([]byte, 100)...), 10), ErrMalformedObject)
}

// A page of exactly the room left is listed; one item more is refused,
// and a million empty items are refused with a few MiB allocated: the
// body, not the million Pods it would decode into (a gigabyte).
func TestListAtMostRefusesBeforeDecoding(t *testing.T) {
	for _, mt := range mediaTypes {
		t.Run(mt, func(t *testing.T) {
			small := emptyItems(t, mt, 10)
			huge := emptyItems(t, mt, 1_000_000)
			var body []byte
			ts := testserver.New(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", mt)
				_, _ = w.Write(body)
			})
			lw := newTestLW(t, ts, Options{}, nil)
			ctx := context.Background()

			body = small
			obj, err := lw.ListAtMost(ctx, metav1.ListOptions{}, 10)
			require.NoError(t, err)
			assert.Len(t, obj.(*corev1.PodList).Items, 10)
			_, err = lw.ListAtMost(ctx, metav1.ListOptions{}, 9)
			require.ErrorIs(t, err, ErrTooManyItems)
			_, err = lw.ListAtMost(ctx, metav1.ListOptions{}, 0)
			require.ErrorIs(t, err, ErrTooManyItems)

			body = huge
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = lw.ListAtMost(ctx, metav1.ListOptions{}, 2000)
			runtime.ReadMemStats(&after)
			require.ErrorIs(t, err, ErrTooManyItems)
			var marked interface{ TooManyItems() bool }
			require.ErrorAs(t, err, &marked, "the mark the reflector looks for")
			allocated := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d KiB body, %d KiB allocated to refuse it", len(huge)>>10, allocated>>10)
			assert.Less(t, allocated, uint64(3*len(huge)+1<<20), "allocated to refuse a million items")
		})
	}
}

// emptyItems is a PodList body of n empty items in mediaType.
func emptyItems(t *testing.T, mediaType string, n int) []byte {
	if mediaType == rest.ContentTypeProtobuf {
		return emptyItemsProtobuf(t, n)
	}
	return emptyItemsJSON(n)
}

func emptyItemsJSON(n int) []byte {
	items := strings.TrimSuffix(strings.Repeat("{},", n), ",")
	return []byte(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[` + items + `]}`)
}

// emptyItemsProtobuf is an enveloped PodList of n empty items: field 2,
// length 0, n times.
func emptyItemsProtobuf(t *testing.T, n int) []byte {
	return emptyItemsProtobufRaw(t, bytes.Repeat([]byte{listItemsField<<3 | 2, 0}, n))
}

// emptyItemsProtobufRaw envelopes a PodList's bytes followed by extra.
func emptyItemsProtobufRaw(t *testing.T, extra []byte) []byte {
	t.Helper()
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "5"}}
	raw, err := list.Marshal()
	require.NoError(t, err)
	env := kruntime.Unknown{TypeMeta: kruntime.TypeMeta{APIVersion: "v1", Kind: "PodList"}, Raw: append(raw, extra...)}
	out, err := env.Marshal()
	require.NoError(t, err)
	return append(append([]byte(nil), protobufMagic...), out...)
}

// BenchmarkListItemCount compares the item count scan with decoding the
// same page of realistic pods, the cost it adds to a page large enough to
// be scanned (see checkItemCount: ordinary pages are not):
//
//	go test -run '^$' -bench ListItemCount ./reflector/wire/
func BenchmarkListItemCount(b *testing.B) {
	const n = 5000
	for _, ct := range mediaTypes {
		body := realPodList(b, ct, n)
		name := ct[len("application/"):]
		b.Run(name+"/count", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				require.NoError(b, checkItemCount(ct, body, n))
			}
		})
		b.Run(name+"/decode", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			tgt := podTarget(b, true)
			for b.Loop() {
				_, err := tgt.decodeList(ct, body)
				require.NoError(b, err)
			}
		})
	}
}
