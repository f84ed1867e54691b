package share

import (
	"bytes"
	"hash/maphash"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed31a95821/informer/internal/realpod"
)

// StringOf gives the kept string for bytes equal to it, without
// allocating, and otherwise a copy that holds nothing of the bytes (a
// decoder's frame buffer, reused for the next frame).
func TestStringOfTakesTheKeptStringAndCopiesTheRest(t *testing.T) {
	var tbl Table
	buf := []byte("kube-system")
	met := tbl.StringOf(buf) // met once: the doorkeeper remembers it, the table keeps nothing
	first := tbl.StringOf(buf)
	copy(buf, "XXXXXXXXXXX")
	assert.Equal(t, "kube-system", met, "a string made from the buffer, not over it")
	assert.Equal(t, "kube-system", first, "a string made from the buffer, not over it")
	assert.False(t, sameString(met, first), "the string met once is a copy of its own")
	again := tbl.StringOf([]byte("kube-system"))
	assert.True(t, sameString(first, again), "the kept string, kept at its second meeting")
	p := realpod.New(0)
	p.Namespace = strings.Clone("kube-system")
	tbl.Strings(p)
	assert.True(t, sameString(first, p.Namespace), "the one Strings gives")
	b := []byte("kube-system")
	assert.Zero(t, testing.AllocsPerRun(100, func() { tbl.StringOf(b) }), "a kept string costs no allocation")

	long := bytes.Repeat([]byte("x"), maxString+1)
	before := tbl.Stats().Strings
	s := tbl.StringOf(long)
	long[0] = 'y'
	assert.Equal(t, strings.Repeat("x", maxString+1), s)
	assert.Equal(t, before, tbl.Stats().Strings, "too long to keep")
	assert.Empty(t, tbl.StringOf(nil))

	var none *Table
	b = []byte("default")
	s = none.StringOf(b)
	b[0] = 'D'
	assert.Equal(t, "default", s, "a nil table copies")
}

// FindBytes finds only a slice Share kept, equal to the bytes in full:
// not one under the same hash with other content or of another type,
// and never one that an append could write past.
func TestFindBytesFindsOnlyWhatShareKept(t *testing.T) {
	var tbl Table
	p := decoded(&tbl, realpod.New(0))
	tbl.Share(p)
	kept := p.ManagedFields[0].FieldsV1.Raw
	got := tbl.FindBytes(bytes.Clone(kept))
	require.NotNil(t, got)
	assert.Same(t, &kept[0], &got[0], "the slice Share kept")
	assert.Equal(t, len(got), cap(got), "no room to append into")

	other := bytes.Clone(kept)
	other[len(other)-1] ^= 1
	assert.Nil(t, tbl.FindBytes(other), "other bytes")
	assert.Nil(t, tbl.FindBytes(nil))
	assert.Nil(t, tbl.FindBytes(bytes.Repeat([]byte("x"), maxValue+1)))
	var none *Table
	assert.Nil(t, none.FindBytes(kept))

	// Under the hash of some bytes, a slice of other content, then a map.
	raw := []byte(`{"f:metadata":{}}`)
	collider := []byte(`{"f:metadata":[]}`)
	m := map[string]string{"a": "b"}
	tbl.lock()
	h := salt(maphash.Bytes(tbl.seed, raw), kindBytes, len(raw))
	find[[]byte, sliceHolder[byte]](&tbl, h, collider, len(collider), func([]byte) bool { return true })
	tbl.mu.Unlock()
	assert.Nil(t, tbl.FindBytes(raw), "a colliding slice of other content")
	tbl.lock()
	delete(tbl.vals, h)
	find[map[string]string, mapHolder[map[string]string]](&tbl, h, m, 8, func(map[string]string) bool { return true })
	tbl.mu.Unlock()
	assert.Nil(t, tbl.FindBytes(raw), "a map under the same hash")
	goruntime.KeepAlive(p)
	goruntime.KeepAlive(collider)
	goruntime.KeepAlive(m)
}

// Decoders look strings and bytes up while other decoders of the same
// informer share their pods into the table. Run with -race.
func TestLookupsByBytesAreSafeWhileSharing(t *testing.T) {
	var tbl Table
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				p := decoded(&tbl, realpod.New(g*1000+i))
				tbl.Share(p)
				for _, e := range p.ManagedFields {
					raw := bytes.Clone(e.FieldsV1.Raw)
					if got := tbl.FindBytes(raw); got != nil && !bytes.Equal(got, raw) {
						t.Errorf("FindBytes gave other bytes")
					}
					if s := tbl.StringOf([]byte(e.Manager)); s != e.Manager {
						t.Errorf("StringOf(%q) = %q", e.Manager, s)
					}
				}
			}
		})
	}
	wg.Wait()
}
