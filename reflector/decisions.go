package reflector

import (
	"errors"
	"fmt"
	"time"

	"github.com/seed31a95821/informer/internal/rvorder"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// The reflector's smaller decisions, as pure functions: no I/O, no clock,
// no randomness of their own. Each is checked by a table test. What follows
// what happened is not among them: that is the transition table's
// (transitions.go). The I/O in list.go, watchlist.go and watch.go asks
// these how to make its requests and what an answer means.

// listResourceVersion picks the resourceVersion of a (re)list.
//
//   - "" (a consistent read, served as fresh as etcd's quorum) once the last
//     resourceVersion proved unusable: a 410 Expired or "too large resource
//     version" answered a list at it.
//   - "0" for the very first list: "any version you have", which the API
//     server answers from its watch cache without touching etcd. It may be
//     stale (an HA server lagging behind its peers), which is fine: the
//     watch that follows brings the reflector up to date.
//   - the last synced resourceVersion afterwards: "at least as fresh as what
//     I have seen", so the store never goes back in time, still servable by
//     the watch cache.
func listResourceVersion(lastSynced string, unusable bool) string {
	switch {
	case unusable:
		return ""
	case lastSynced == "":
		return "0"
	default:
		return lastSynced
	}
}

// streamResourceVersion picks the resourceVersion of a WatchList request
// (with resourceVersionMatch=NotOlderThan). "" asks for a consistent
// snapshot, which is also the right start when nothing was synced yet:
// unlike a List, WatchList has no cheap "0".
func streamResourceVersion(lastSynced string, unusable bool) string {
	if unusable {
		return ""
	}
	return lastSynced
}

// defaultPageSize is client-go's page size.
const defaultPageSize = 500

// pageLimit returns the Limit of a list's first page, 0 for no paging.
//
// With PageSize 0 it follows client-go. The API server's watch cache serves
// a list at a specific resourceVersion only when it is unpaged; a paged one
// goes to etcd. After a control-plane restart every client relists at once,
// so paging those lists would send them all to etcd. Lists at "0" or ""
// keep pages of 500: the watch cache ignores the limit at "0" anyway, and a
// consistent read goes to etcd regardless. If the very first list (at "0")
// came back paged, the server has no watch cache for this resource, so
// pages are kept for every later list too (paginatedBefore).
func pageLimit(pageSize int64, rv string, paginatedBefore bool) int64 {
	switch {
	case pageSize > 0:
		return pageSize
	case pageSize < 0:
		return 0
	case paginatedBefore:
		return defaultPageSize
	case rv != "" && rv != "0":
		return 0
	default:
		return defaultPageSize
	}
}

// watchTimeoutSeconds draws a watch's server-side timeout from
// [min, 2 x min); u is uniform in [0, 1). Spreading the timeouts keeps a
// fleet of reflectors from reconnecting in lockstep. Never below one
// second: timeoutSeconds=0 would mean "no timeout" to the server.
func watchTimeoutSeconds(min time.Duration, u float64) int64 {
	return max(1, int64(min.Seconds()*(1+u)))
}

// refusesWatchList reports a failure that shows the server does not
// support WatchList, rather than a passing problem: it rejected the
// parameters (400, 422, 405), or it accepted the watch but never sent the
// initial-events-end bookmark (an old server, or a fake ignoring
// sendInitialEvents), or sent more initial events than a snapshot may hold
// (a server repeating its objects without end). In WatchListAuto mode the
// reflector then stops trying WatchList.
func refusesWatchList(err error) bool {
	return errors.Is(err, errWatchListTimeout) || errors.Is(err, errWatchListClosed) ||
		errors.Is(err, ErrListTooLarge) || apierrors.IsBadRequest(err) || apierrors.IsInvalid(err) ||
		apierrors.IsMethodNotSupported(err)
}

// replaysState reports whether a watch started at rv replays the current
// state before any change: "" and "0" are no position in the history, so
// such a watch begins with synthetic ADDED events for every object, in no
// resourceVersion order. Their resourceVersions are no progress until an
// event of another type shows the replay is over (resuming from one of them
// could skip changes), and the store's resourceVersion cannot be "" or "0"
// for a watch to resume from (the transition table relists instead).
func replaysState(rv string) bool {
	return rv == "" || rv == "0"
}

// useWatchList decides whether the next snapshot is streamed.
// lwSupports is the ListerWatcher's own answer (true when it does not say),
// refused whether a server already refused it in this reflector's life.
func useWatchList(mode WatchListMode, lwSupports, refused bool) bool {
	switch mode {
	case WatchListOn:
		return true
	case WatchListOff:
		return false
	default:
		return lwSupports && !refused
	}
}

// minWatchLife is how long a watch must last for its clean end to count as
// the normal end of a watch (client-go's figure, which it applies only to
// watches without events).
const minWatchLife = time.Second

// watchEndCause decides what a watch's end means, given why it ended (nil:
// the stream closed cleanly) and how long it lasted. A clean end before
// minWatchLife is not the server's timeoutSeconds running out (that is
// minutes): it is a server or proxy that cuts every watch short. Counting
// the events would not help: one that ends each watch after one event
// would get a new watch, at once, forever (thousands of requests a
// second). So whatever it carried, such a watch ends in errShortWatch, and
// the transition table backs off.
func watchEndCause(err error, lasted time.Duration) error {
	if err == nil && lasted < minWatchLife {
		return fmt.Errorf("%w: after %v", errShortWatch, lasted)
	}
	return err
}

// listLimits bound one list (all its pages) or one WatchList initial set:
// what a server may make the reflector hold or request for one snapshot.
type listLimits struct {
	maxPages int // pages per list
	maxItems int // objects per list, or events before the bookmark
}

// nextPage decides whether a list may ask for the page after the pages it
// has read, whose continue token was already seen in this list (repeated)
// or not. A token seen before would page in a loop for ever; a list past
// the page cap is one no real cluster serves. Both are a response the
// reflector cannot use: KindDecode, so the list backs off and is retried.
func nextPage(pages int, repeated bool, lim listLimits) error {
	switch {
	case repeated:
		return fmt.Errorf("%w: after %d pages", ErrContinueLoop, pages)
	case pages >= lim.maxPages:
		return fmt.Errorf("%w: more than %d pages", ErrListTooLarge, lim.maxPages)
	}
	return nil
}

// pageRoom is the most objects the next page of a list holding n may
// bring: what an itemCapLister is asked for, so that it refuses a larger
// page before decoding it, as roomFor would after.
func pageRoom(n int, lim listLimits) int {
	return max(lim.maxItems-n, 0)
}

// pageRefused files an itemCapLister's refusal of a page too large for
// its room as roomFor files its own count: ErrListTooLarge, KindDecode.
// Any other error is returned as it is.
func pageRefused(err error, lim listLimits) error {
	var refused tooManyItems
	if errors.As(err, &refused) && refused.TooManyItems() {
		return fmt.Errorf("%w: more than %d objects: %w", ErrListTooLarge, lim.maxItems, err)
	}
	return err
}

// roomFor decides whether a snapshot holding n objects (a list's items so
// far, or a WatchList's initial events so far) may take one more.
func roomFor(n int, lim listLimits) error {
	if n >= lim.maxItems {
		return fmt.Errorf("%w: more than %d objects", ErrListTooLarge, lim.maxItems)
	}
	return nil
}

// wentBack reports whether rv, the resourceVersion of a watch event, is
// older than reached, the position the same watch had already reached.
// Whether two resourceVersions are ordered at all, and how, is decided in
// internal/rvorder (numbers as apimachinery compares them; an opaque or
// missing one never goes back); it runs once per event and allocates
// nothing.
func wentBack(reached, rv string) bool {
	return rvorder.Older(rv, reached)
}
