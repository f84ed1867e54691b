package share

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A string met once is given no entry; met a second time, that copy is
// kept and handed to every later meeting.
func TestAStringIsKeptAtItsSecondMeeting(t *testing.T) {
	var tbl Table
	tbl.lock()
	defer tbl.mu.Unlock()
	const s = "bench.informer/written-at"
	first := strings.Clone(s)
	assert.True(t, sameString(first, tbl.str(first)))
	assert.Empty(t, tbl.strs, "met once: no entry")
	second := strings.Clone(s)
	assert.True(t, sameString(second, tbl.str(second)))
	assert.Len(t, tbl.strs, 1, "met twice: kept")
	assert.True(t, sameString(second, tbl.str(strings.Clone(s))), "the kept copy from then on")
	assert.True(t, sameString(first, first), "the first keeps its own")
}

// The doorkeeper's bits are bounded by the table's budget (a 64th of it),
// whatever a server sends: past the bound it is cleared, and a string met
// twice in a row is still let in.
func TestTheDoorkeeperIsBounded(t *testing.T) {
	tbl := Table{Budget: 256 << 10}
	tbl.lock()
	defer tbl.mu.Unlock()
	maxBits := tbl.budget() / 64 * 8
	for i := range 200_000 {
		s := fmt.Sprint("once-", i)
		tbl.str(s)
		require.LessOrEqual(t, len(tbl.door.bits)*64, maxBits, "after %d strings", i)
		if i%1000 == 0 {
			twice := fmt.Sprint("twice-", i)
			tbl.str(twice)
			tbl.str(strings.Clone(twice))
			_, ok := tbl.strs[twice]
			require.True(t, ok, "a string met twice, after %d met once", i)
		}
	}
	assert.Equal(t, maxBits, len(tbl.door.bits)*64, "it grew to its bound")
	// A string met once is let in by mistake only when its bit was set:
	// at most one in doorFill.
	assert.Less(t, len(tbl.strs), 200_000/doorFill+200, "strings met once kept")
}
