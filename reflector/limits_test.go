package reflector

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// What a server cannot make the reflector do: page for ever, hold more
// than a snapshot's cap, or re-watch in a tight loop (issue 16).

func TestWatchEndCause(t *testing.T) {
	cut := fmt.Errorf("cut")
	tests := []struct {
		name   string
		err    error
		lasted time.Duration
		short  bool
	}{
		{"clean end after the server's timeout: normal", nil, 5 * time.Minute, false},
		{"clean end just past the minimum: normal", nil, minWatchLife, false},
		{"clean end at once: short", nil, 10 * time.Millisecond, true},
		{"an error is kept, however soon", cut, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := watchEndCause(tt.err, tt.lasted)
			if tt.short {
				assert.ErrorIs(t, got, errShortWatch)
				return
			}
			assert.Equal(t, tt.err, got)
		})
	}
}

func TestNextPage(t *testing.T) {
	lim := listLimits{maxPages: 3, maxItems: 10}
	assert.NoError(t, nextPage(1, false, lim))
	assert.NoError(t, nextPage(2, false, lim))
	assert.ErrorIs(t, nextPage(3, false, lim), ErrListTooLarge, "a fourth page")
	assert.ErrorIs(t, nextPage(1, true, lim), ErrContinueLoop)
	assert.Equal(t, KindDecode, KindOf(nextPage(1, true, lim)))
	assert.Equal(t, KindDecode, KindOf(nextPage(3, false, lim)))
}

func TestRoomFor(t *testing.T) {
	lim := listLimits{maxPages: 3, maxItems: 2}
	assert.NoError(t, roomFor(0, lim))
	assert.NoError(t, roomFor(1, lim))
	assert.ErrorIs(t, roomFor(2, lim), ErrListTooLarge)
}

func TestDefaultLimitsAreFinite(t *testing.T) {
	o := Options{}.withDefaults()
	assert.Equal(t, 2_000_000, o.MaxListItems)
	assert.Equal(t, 10_000, o.MaxListPages)
}

func TestPageRoom(t *testing.T) {
	lim := listLimits{maxPages: 3, maxItems: 10}
	assert.Equal(t, 10, pageRoom(0, lim))
	assert.Equal(t, 3, pageRoom(7, lim))
	assert.Equal(t, 0, pageRoom(10, lim))
	assert.Equal(t, 0, pageRoom(12, lim), "never negative")
}

func TestPageRefused(t *testing.T) {
	lim := listLimits{maxPages: 3, maxItems: 10}
	got := pageRefused(fmt.Errorf("list: %w", refusal{}), lim)
	assert.ErrorIs(t, got, ErrListTooLarge)
	assert.ErrorIs(t, got, refusal{}, "the lister's error stays in the chain")
	assert.Equal(t, KindDecode, KindOf(got))
	other := fmt.Errorf("other")
	assert.Same(t, other, pageRefused(other, lim))
	assert.NoError(t, pageRefused(nil, lim))
}
