package wire

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"

	"github.com/seed31a95821/informer/internal/share"
)

// A count of fields whose bytes parse is not a count of what decodes:
// elements that fail inside (the generated decoder stops at the first)
// or a map that repeats one key (it keeps one entry) cost the generated
// decoder next to nothing, and must not cost the parts decoder a slice or
// a map of that count, many times the bytes of the frame. Before
// presizeMax a 1 MB pod of such fields took from 7 MB (the map) to
// 140 MB (the containers).
func TestPresizeIsBoundedByWhatDecodes(t *testing.T) {
	const size = 1 << 20
	repeat := func(b []byte) []byte { return bytes.Repeat(b, size/len(b)) }
	bad := []byte{0xff} // a varint cut short: no message decodes from it
	cases := map[string][]byte{
		"one label, sent again and again": field(1, repeat(field(11, concat(field(1, nil), field(2, nil))))),
		"empty label entries":             field(1, repeat(field(11, nil))),
		"managedFields entries that fail": field(1, repeat(field(17, bad))),
		"container statuses that fail":    field(3, repeat(field(8, bad))),
		"conditions that fail":            field(3, repeat(field(2, bad))),
		"containers that fail":            field(2, repeat(field(2, bad))),
		"volumes that fail":               field(2, repeat(field(1, bad))),
	}
	for name, raw := range cases {
		t.Run(name, func(t *testing.T) {
			d := &protoDecoder{parts: &partsCache{strs: &share.Table{Budget: share.StringsBudget}}}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, _ = d.decode(raw, new(corev1.Pod))
			runtime.ReadMemStats(&after)
			allocated := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d bytes allocated", allocated)
			assert.Less(t, allocated, uint64(size), "bytes allocated to decode a %d-byte pod", len(raw))
			checkAsGenerated(t, d, raw)
		})
	}
}
