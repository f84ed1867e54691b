package attack_test

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer/reflector"
	"github.com/seed31a95821/informer/reflector/wire"
	"github.com/seed31a95821/informer/rest"
)

// Attacks through a list's size (issue 32): many items in few bytes, and
// few bytes on the wire that inflate to many.

// gzipBomb is head, then part times times, then tail, gzip-compressed as
// one gzip member each: a gzip stream may hold several, and net/http
// inflates them all, so part is compressed once however many times it
// is repeated.
func gzipBomb(t *testing.T, head, part []byte, times int, tail []byte) []byte {
	t.Helper()
	member := func(p []byte) []byte {
		var b bytes.Buffer
		zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
		require.NoError(t, err)
		_, err = zw.Write(p)
		require.NoError(t, err)
		require.NoError(t, zw.Close())
		return b.Bytes()
	}
	out := member(head)
	repeated := member(part)
	for range times {
		out = append(out, repeated...)
	}
	return append(out, member(tail)...)
}

// serveBody answers every list with body, of contentType.
func serveBody(contentType string, body []byte) handler {
	return func(a *attack, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write(body)
	}
}

// serveGzip answers every list with body, gzip-compressed.
func serveGzip(contentType string, body []byte) handler {
	return func(a *attack, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(body)
	}
}

const emptyListHead = `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[`

// Item 1, as reported: ten million empty items, 28 MiB of JSON sent as
// 28 KiB of gzip, against the default caps. Decoded whole it needed 11.5
// GiB before the item cap (2,000,000) saw an item; now the items are
// counted in the raw body and the page is refused at the cap's first
// excess, holding the body alone.
func TestAttackTenMillionEmptyItems(t *testing.T) {
	body := gzipBomb(t, []byte(emptyListHead), bytes.Repeat([]byte("{},"), 1_000_000), 10, []byte("{}]}"))
	t.Logf("%d KiB on the wire", len(body)>>10)
	a := newListAttack(t, serveGzip("application/json", body))
	a.start()
	a.waitErr(reflector.KindDecode, reflector.ErrListTooLarge)
	a.observe(time.Second)
	require.Empty(t, a.cacheKeys())
	// Each attempt holds the inflated body (28 MiB, in a buffer that
	// doubles to 32, after the smaller ones); the attempts back off from
	// 800ms, and the peak counts garbage not yet collected.
	a.stop(bounds{requests: 10, heap: 192 << 20})
}

// Item 1, in both encodings, with a small cap, so that the old behaviour
// (decode the page, then count) shows within the test's means: 200,000
// empty items against MaxListItems 1,000. The page is refused having
// allocated about twice its own size per attempt.
func TestAttackEmptyItemsPastTheCap(t *testing.T) {
	const items = 200_000
	bodies := map[string][]byte{
		rest.ContentTypeJSON:     append(append([]byte(emptyListHead), bytes.Repeat([]byte("{},"), items)...), "{}]}"...),
		rest.ContentTypeProtobuf: envelopedPodList(t, bytes.Repeat([]byte{2<<3 | 2, 0}, items)),
	}
	for ct, body := range bodies {
		t.Run(ct, func(t *testing.T) {
			a := newListAttack(t, serveBody(ct, body))
			a.cfg.ContentType = ct
			a.opts.Reflector.MaxListItems = 1000
			a.start()
			e := a.waitErr(reflector.KindDecode, reflector.ErrListTooLarge)
			require.ErrorIs(t, e, wire.ErrTooManyItems)
			a.observe(time.Second)
			require.Empty(t, a.cacheKeys())
			// A few attempts of under 2 MiB each. Decoding first, the
			// old code had not refused the page within 15 s.
			a.stop(bounds{requests: 10, heap: 32 << 20, allocated: 64 << 20})
		})
	}
}

// A page of a million tiny items whose first item does not decode, under
// the default caps (MaxListItems is 2,000,000, so the count lets it
// through). The decoders used to make every item of the page before
// decoding the first: 1.2 GiB for 2-3 MiB of bytes, on every retry, and
// for JSON encoding/json then decoded the whole page again, as it goes on
// past a type error. They now make what the page's bytes pay for, grow as
// items decode, and stop at the first item of a wrong type.
func TestAttackBadItemAmongTinyItems(t *testing.T) {
	const items = 1_000_000
	bad := []byte{2<<3 | 2, 3, 1<<3 | 2, 1, 0xff} // an item whose metadata is a cut varint
	bodies := map[string][]byte{
		rest.ContentTypeProtobuf: envelopedPodList(t, append(bad, bytes.Repeat([]byte{2<<3 | 2, 0}, items-1)...)),
		// A type error, past which encoding/json goes on decoding.
		rest.ContentTypeJSON: append(append([]byte(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[{"metadata":5}`),
			bytes.Repeat([]byte(",{}"), items-1)...), "]}"...),
	}
	// Per attempt: the body (2-3 MiB, read into a growing buffer), a part
	// set per item (4 MiB), the pods the bytes pay for (one per 256 bytes,
	// 9.5-14 MiB), and for JSON each item's span (16 MiB, grown by
	// doubling). Heap at the peak in three runs: 29 MiB for protobuf, 92
	// MiB for JSON; allocated per attempt 13 and 78 MiB.
	limits := map[string]bounds{
		rest.ContentTypeProtobuf: {requests: 10, heap: 48 << 20, perRequest: 32 << 20},
		rest.ContentTypeJSON:     {requests: 10, heap: 128 << 20, perRequest: 112 << 20},
	}
	for ct, body := range bodies {
		t.Run(ct, func(t *testing.T) {
			a := newListAttack(t, serveBody(ct, body))
			a.cfg.ContentType = ct
			a.start()
			a.waitErr(reflector.KindDecode, nil)
			a.observe(time.Second)
			require.Empty(t, a.cacheKeys())
			a.stop(limits[ct])
		})
	}
}

// Item 2: a list gzip-compressed to about a MiB that inflates to a GiB,
// against MaxObjectBytes of 8 MiB. The body buffer used to double past
// the limit (4 GiB at the default limit); it now stops at limit+1 bytes.
func TestAttackGzipBombList(t *testing.T) {
	body := gzipBomb(t, []byte(emptyListHead), bytes.Repeat([]byte{' '}, 1<<20), 1024, []byte("]}"))
	t.Logf("%d KiB on the wire", len(body)>>10)
	a := newListAttack(t, serveGzip("application/json", body))
	a.cfg.MaxObjectBytes = 8 << 20
	a.start()
	e := a.waitErr(reflector.KindOther, rest.ErrObjectTooLarge)
	require.Equal(t, "list", e.Op)
	a.observe(time.Second)
	require.Empty(t, a.cacheKeys())
	// Under three times the limit per attempt, a few attempts (how many
	// fit in the second observed is the scheduler's: 4 to 5).
	a.stop(bounds{requests: 10, heap: 40 << 20, perRequest: 3 * 8 << 20})
}

// envelopedPodList is a protobuf PodList (resourceVersion 5) followed by
// the raw fields extra, in the Kubernetes envelope.
func envelopedPodList(t *testing.T, extra []byte) []byte {
	t.Helper()
	raw, err := (&corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "5"}}).Marshal()
	require.NoError(t, err)
	env := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "v1", Kind: "PodList"}, Raw: append(raw, extra...)}
	out, err := env.Marshal()
	require.NoError(t, err)
	return append([]byte("k8s\x00"), out...)
}
