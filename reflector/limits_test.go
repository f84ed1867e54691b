package reflector

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/watch"
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

func TestListRepeatedContinueTokenBacksOff(t *testing.T) {
	h := start(t, newScriptLW(), Options{WatchList: WatchListOff, PageSize: 1})
	h.lw.next(t, "list").list(podList("10", "same", pod("a", "9")), nil)
	c := h.lw.next(t, "list")
	assert.Equal(t, "same", c.opts.Continue)
	c.list(podList("", "same", pod("b", "9")), nil)

	e := h.waitErr(KindDecode)
	assert.ErrorIs(t, e, ErrContinueLoop)
	h.waitState(StateBackingOff)
	h.lw.none(t)
	assert.Empty(t, h.store.snapshot(), "nothing of the looping list is stored")
	h.clk.fireNext(t)
	c = h.lw.next(t, "list")
	assert.Equal(t, "", c.opts.Continue, "the retry starts the list over")
}

func TestListPageCap(t *testing.T) {
	h := start(t, newScriptLW(), Options{WatchList: WatchListOff, PageSize: 1, MaxListPages: 2})
	h.lw.next(t, "list").list(podList("10", "t1", pod("a", "9")), nil)
	h.lw.next(t, "list").list(podList("", "t2", pod("b", "9")), nil)

	e := h.waitErr(KindDecode)
	assert.ErrorIs(t, e, ErrListTooLarge)
	h.waitState(StateBackingOff)
	h.lw.none(t)
	assert.Equal(t, int64(2), h.r.Stats().ListRequests)
}

func TestListItemCap(t *testing.T) {
	h := start(t, newScriptLW(), Options{WatchList: WatchListOff, MaxListItems: 2})
	h.lw.next(t, "list").list(podList("10", "", pod("a", "9"), pod("b", "9"), pod("c", "9")), nil)

	e := h.waitErr(KindDecode)
	assert.ErrorIs(t, e, ErrListTooLarge)
	h.waitState(StateBackingOff)
	assert.Empty(t, h.store.snapshot())
}

func TestListItemCapAtTheLimitSyncs(t *testing.T) {
	h := start(t, newScriptLW(), Options{WatchList: WatchListOff, MaxListItems: 2, PageSize: 1})
	h.lw.next(t, "list").list(podList("10", "t1", pod("a", "9")), nil)
	h.lw.next(t, "list").list(podList("", "", pod("b", "9")), nil)
	h.lw.next(t, "watch")
	assert.Equal(t, []string{"replace [ns/a ns/b]@10"}, h.store.snapshot())
}

// One object sent again and again before the bookmark takes one entry.
func TestWatchListFoldsRepeatedObjects(t *testing.T) {
	h := start(t, newScriptLW(), Options{})
	h.lw.next(t, "watch").watch(fakeWatch(false,
		added(pod("a", "5")), added(pod("a", "6")), added(pod("a", "7")), added(pod("b", "8")),
		marked(bookmark("9", true))), nil)
	assert.Equal(t, []string{"replace [ns/a ns/b]@9"}, h.store.waitOps(t, 1))
	h.store.mu.Lock()
	obj := h.store.objs["ns/a"]
	h.store.mu.Unlock()
	require.NotNil(t, obj)
	assert.Equal(t, "7", rvOf(obj), "the latest state")
}

// Past the cap, without a bookmark, WatchList gives up and lists; in Auto
// mode it is not tried again.
func TestWatchListCapFallsBackToList(t *testing.T) {
	h := start(t, newScriptLW(), Options{MaxListItems: 3})
	fw := fakeWatch(false, added(pod("a", "5")), added(pod("a", "6")), added(pod("a", "7")), added(pod("a", "8")))
	h.lw.next(t, "watch").watch(fw, nil)

	e := h.waitErr(KindDecode)
	assert.ErrorIs(t, e, ErrListTooLarge)
	assert.Equal(t, opWatchList, e.Op)
	h.lw.next(t, "list").list(podList("10", "", pod("x", "9")), nil)
	w := h.lw.next(t, "watch")
	assert.Nil(t, w.opts.SendInitialEvents, "WatchList is not tried again")
	assert.Equal(t, []string{"replace [ns/x]@10"}, h.store.snapshot())
	assert.Equal(t, int64(4), h.r.Stats().Events[watch.Added])
}

// An object without a name is skipped, in a list and in a watch, while a
// bookmark, which has none, still advances the resourceVersion.
func TestNamelessObjectsAreSkipped(t *testing.T) {
	h := start(t, newScriptLW(), listOnly())
	w := h.sync("10", pod("a", "9"), pod("", "9"))
	e := h.waitErr(KindWrongType)
	assert.ErrorIs(t, e, ErrNoName)
	fw := fakeWatch(false, added(pod("", "11")), marked(bookmark("12", false)))
	w.watch(fw, nil)
	h.waitRV("12")
	assert.Equal(t, []string{"replace [ns/a]@10", "bookmark@12"}, h.store.snapshot())
	assert.Equal(t, int64(2), h.r.Stats().Errors[KindWrongType])
}
