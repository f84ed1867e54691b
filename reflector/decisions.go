package reflector

import (
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// The reflector's decisions, as pure functions: no I/O, no clock, no
// randomness of their own. Each is checked by a table test. The steps in
// list.go, watchlist.go and watch.go do the I/O and ask these what to do.

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

// listState is the state that (re)does the listing: the first snapshot is
// Listing, every later one Relisting.
func listState(synced bool) State {
	if synced {
		return StateRelisting
	}
	return StateListing
}

// afterListError decides what follows a failed list made at rv.
//
// A 410 Expired or "too large resource version" means rv itself is the
// problem: retry at once with a consistent read (RV ""), as client-go does.
// If the consistent read fails the same way, something else is wrong, so
// back off like for any other failure, and keep listing at "".
func afterListError(kind Kind, rv string, synced bool) reaction {
	next := listState(synced)
	if kind == KindExpired || kind == KindTooLargeRV {
		return reaction{next: next, backoff: rv == "", consistent: true}
	}
	return reaction{next: next, backoff: true}
}

// afterWatchEnd decides what follows the end of a watch; kind is ignored
// when clean is true (the stream closed normally: the server's timeout).
//
// The rule that prevents relist storms: only the server saying "your
// resourceVersion is gone" (410) or "I do not have it yet" leads to a
// relist. Everything else (a cut connection, a 429, a 5xx, a restarted
// server) is retried as a watch from the last resourceVersion, after a
// backoff: once the server is back it almost always still has that history,
// and a watch costs it a fraction of a list. client-go relists after most
// of these (kubernetes/kubernetes#119646 saw 100k+ duplicate updates).
//
// The one exception is a response the reflector could not understand
// (KindDecode): a frame the client refused, too large or malformed, or an
// ERROR event without a Status. Such a frame sits in the server's history
// at a fixed resourceVersion, and a watch from before it meets it again,
// every time, until the server compacts it away: the store would hear
// nothing more for as long. A relist moves the position past it. It is rare
// (a server sends such frames seldom, if ever), and when it is not (a proxy
// that mangles every frame, say) the relists still come after a backoff
// that keeps growing while the failures go on: one list per Backoff.Max
// (30s by default) at worst, not a storm.
//
// After a 410 the relist is made at the last resourceVersion, not at "":
// a list "at least as fresh as RV" is valid even when RV has left the
// watch's history, and the watch cache can serve it. (This is client-go's
// choice too; the list falls back to "" if the server refuses.) It comes
// after a backoff, as in client-go, so that a server compacting faster than
// the reflector can list does not turn into a tight list loop.
//
// A clean end is only "clean" once the watch lasted minWatchLife (see
// watchEndCause); before, it arrives here as KindShortWatch and backs off.
func afterWatchEnd(kind Kind, clean bool) reaction {
	switch {
	case clean:
		// The server's timeoutSeconds ran out: the normal life of a watch.
		return reaction{next: StateWatching}
	case kind == KindStuckWatch:
		// The old stream is dead; a new one costs nothing and needs no
		// pause. If the server really is unreachable, opening it fails and
		// that failure backs off.
		return reaction{next: StateWatching}
	case kind == KindExpired, kind == KindTooLargeRV, kind == KindDecode:
		return reaction{next: StateRelisting, backoff: true}
	default:
		return reaction{next: StateWatching, backoff: true}
	}
}

// resumable turns a planned re-watch into a relist when the last
// resourceVersion is no position at all. A watch from "" or "0" does not
// resume: it starts over with synthetic ADDED events for what exists now, and
// objects deleted in between are never reported, so the store would keep
// them forever. That happens when nothing since the last snapshot has
// carried a resourceVersion (an empty server answers a WatchList with a
// bookmark at "0"), or while a watch from "0" was still replaying. Only a
// relist, whose Replace removes what is gone, recovers from there.
func resumable(rc reaction, lastSyncRV string) reaction {
	if rc.next == StateWatching && holdsResourceVersion(lastSyncRV) {
		rc.next = StateRelisting
	}
	return rc
}

// afterWatchListError decides what follows a failed WatchList stream.
// fallback means "list now, in this same step": WatchList is an
// optimisation, and making progress by listing beats waiting for it.
// Transient failures (throttled, network, 5xx) would fail a list too, so
// those back off first, and the next attempt tries WatchList again.
func afterWatchListError(kind Kind, synced bool) (rc reaction, fallback bool) {
	switch kind {
	case KindThrottled, KindNetwork, KindServerError:
		return reaction{next: listState(synced), backoff: true}, false
	case KindExpired, KindTooLargeRV:
		return reaction{next: listState(synced), consistent: true}, true
	default:
		return reaction{next: listState(synced)}, true
	}
}

// refusesWatchList reports a failure that shows the server does not
// support WatchList, rather than a passing problem: it rejected the
// parameters (400, 422, 405), or it accepted the watch but never sent the
// initial-events-end bookmark (an old server, or a fake ignoring
// sendInitialEvents), or sent more initial events than a snapshot may hold
// (a server repeating its objects without end). In WatchListAuto mode the
// reflector then stops trying WatchList.
func refusesWatchList(err error) bool {
	return errors.Is(err, ErrWatchListTimeout) || errors.Is(err, ErrWatchListClosed) ||
		errors.Is(err, ErrListTooLarge) || apierrors.IsBadRequest(err) || apierrors.IsInvalid(err) ||
		apierrors.IsMethodNotSupported(err)
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

// holdsResourceVersion reports whether a watch started at rv begins with
// synthetic ADDED events for the current state, in no particular RV order
// (a watch at "" or "0" does). Their resourceVersions must not be recorded
// as progress until a non-ADDED event shows the replay is over; resuming
// from one of them could skip changes.
func holdsResourceVersion(rv string) bool {
	return rv == "" || rv == "0"
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
// second). So whatever it carried, such a watch ends in ErrShortWatch, and
// afterWatchEnd backs off.
func watchEndCause(err error, lasted time.Duration) error {
	if err == nil && lasted < minWatchLife {
		return fmt.Errorf("%w: after %v", ErrShortWatch, lasted)
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

// roomFor decides whether a snapshot holding n objects (a list's items so
// far, or a WatchList's initial events so far) may take one more.
func roomFor(n int, lim listLimits) error {
	if n >= lim.maxItems {
		return fmt.Errorf("%w: more than %d objects", ErrListTooLarge, lim.maxItems)
	}
	return nil
}
