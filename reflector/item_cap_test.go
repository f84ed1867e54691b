package reflector

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// cappedLW is a bubbleLW with ListAtMost (itemCapLister): it records the
// room the reflector gives each page, and refuses a page the test marks
// as too large the way reflector/wire does.
type cappedLW struct {
	*bubbleLW
	rooms []int // ListAtMost's maxItems, call by call
}

// refusal is an error marked the way an itemCapLister marks a refusal.
type refusal struct{}

func (refusal) Error() string      { return "too many items in the page" }
func (refusal) TooManyItems() bool { return true }

func (l *cappedLW) ListAtMost(ctx context.Context, opts metav1.ListOptions, maxItems int) (runtime.Object, error) {
	l.rooms = append(l.rooms, maxItems)
	return l.List(ctx, opts)
}

// The reflector lists through ListAtMost when it can, with the room left
// under MaxListItems across the pages of one list, so that a page that
// would not fit is refused before it is decoded; and it files the refusal
// as it files its own count's: ErrListTooLarge, KindDecode.
func TestListAtMostGetsTheRoomLeft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := &cappedLW{bubbleLW: newBubbleLW()}
		var errs []error
		r := New(lw, &recStore{}, Options{Tunables: Tunables{WatchList: WatchListOff, MaxListItems: 5, PageSize: 2},
			OnError: func(err error) { errs = append(errs, err) }})
		stop := runInBubble(t, r)
		lw.next(t, "list").list(podList("10", "c1", pod("a", "1"), pod("b", "2")), nil)
		lw.next(t, "list").list(podList("10", "c2", pod("c", "3")), nil)
		lw.next(t, "list").list(nil, fmt.Errorf("list pods: %w", refusal{}))
		synctest.Wait()
		assert.Equal(t, []int{5, 3, 2}, lw.rooms, "the room left under the cap, page by page")
		require.Len(t, errs, 1)
		assert.ErrorIs(t, errs[0], ErrListTooLarge)
		assert.Equal(t, KindDecode, KindOf(errs[0]))
		var marked refusal
		assert.True(t, errors.As(errs[0], &marked), "the lister's own error is kept in the chain")
		stop()
	})
}
