package wire

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"runtime"
	"testing"

	"github.com/seed31a95821/informer/internal/testserver"
	"github.com/seed31a95821/informer/rest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// gzipBomb is a gzip stream that inflates to about mib MiB: a list's
// opening, then blanks. It is built cheaply as many copies of one gzip
// member (a gzip stream may hold several, and readers inflate them all),
// so the test does not compress the whole of it.
func gzipBomb(t *testing.T, mib int) []byte {
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
	out := member([]byte(`{"kind":"PodList","apiVersion":"v1","items":[`))
	blanks := member(bytes.Repeat([]byte{' '}, 1<<20))
	for range mib {
		out = append(out, blanks...)
	}
	return out
}

// A list body gzip-compressed to a few hundred KiB that inflates to 256
// MiB is refused at MaxObjectBytes of inflated bytes, having allocated no
// more than the body buffer's growth up to the limit (less than three
// times the limit; it was four, the buffer doubling past the limit).
func TestGzipBombListStopsAtTheLimit(t *testing.T) {
	const limit = 4 << 20
	bomb := gzipBomb(t, 256)
	ts := testserver.New(t, func(w http.ResponseWriter, r *http.Request) {
		assert.Contains(t, r.Header.Get("Accept-Encoding"), "gzip", "the client asks for gzip")
		w.Header().Set("Content-Type", rest.ContentTypeJSON)
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(bomb)
	})
	lw := newTestLW(t, ts, Options{}, func(c *rest.Config) { c.MaxObjectBytes = limit })

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := lw.List(context.Background(), metav1.ListOptions{})
	runtime.ReadMemStats(&after)
	require.ErrorIs(t, err, rest.ErrObjectTooLarge)
	t.Logf("bomb of %d KiB on the wire; %d KiB allocated to refuse it", len(bomb)>>10, (after.TotalAlloc-before.TotalAlloc)>>10)
	// The slack is the request, the response and the gzip reader's window.
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(3*limit+1<<20), "allocated to refuse the bomb")
}
