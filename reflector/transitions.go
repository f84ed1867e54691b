package reflector

// The transition table: the one place that decides what follows what
// happened, failures included. Its rows are the rows of the table in
// doc.go, in the same order and with the same words
// (TestTransitionTableMatchesDoc compares them), and step does what the
// chosen row's verdict says. A 410, in particular, is answered here and
// nowhere else.

// transition is one row: in a state (in), when something happened (on,
// narrowed by op, kinds and rv), the machine does then.
type transition struct {
	// state and outcome are the row's first two columns in doc.go; the
	// third is then.String().
	state, outcome string

	in    phase
	on    happening
	op    string // ioFailed: the operation that failed; "" for any
	kinds []Kind // ioFailed: the kinds covered; nil for any
	rv    rvIs   // ioFailed lists: the resourceVersion asked for
	later bool   // ioFailed lists: only a page after the first
	then  verdict
}

// phase is the kind of state a row applies to.
type phase int

const (
	inListing phase = iota
	inWatching
	inBackingOff
	inAny
)

// rvIs narrows a row on the resourceVersion a failed list asked for.
type rvIs int

const (
	anyRV   rvIs = iota
	someRV       // a position: "0" or a specific resourceVersion
	emptyRV      // "": a consistent read
)

// verdict is what the machine does after a row matched.
type verdict int

const (
	// toWatch: watch from where the store is, at once (with the stream a
	// WatchList left open, if any).
	toWatch verdict = iota
	// toBackoffWatch: back off, then watch from where the store is.
	toBackoffWatch
	// toBackoffRelist: back off, then relist at the last resourceVersion.
	toBackoffRelist
	// toBackoffRelistConsistent: back off, then relist with a consistent
	// read (RV "").
	toBackoffRelistConsistent
	// toListConsistent: the same listing again at once, as a consistent
	// read (RV "").
	toListConsistent
	// toBackoffList: back off, then the same listing again.
	toBackoffList
	// toListPaged: a paged List at once, instead of the WatchList that
	// failed.
	toListPaged
	// toListPagedConsistent: toListPaged, as a consistent read.
	toListPagedConsistent
	// toListUnpaged: the same list again at once, in one request.
	toListUnpaged
	// toProbe: wait Backoff.Max (jittered up to twice that, see
	// backoffState.probe), then list with a consistent read: the
	// resource is not served, and a probe at the slowest pace finds out
	// when it is again.
	toProbe
	// toResume: enter the state the wait led to.
	toResume
	// toStop: Run returns.
	toStop
)

var verdictNames = [...]string{
	toWatch:                   "Watching, at once",
	toBackoffWatch:            "BackingOff -> Watching",
	toBackoffRelist:           "BackingOff -> Relisting",
	toBackoffRelistConsistent: `BackingOff -> Relisting at RV ""`,
	toListConsistent:          `Listing at RV "", at once`,
	toBackoffList:             "BackingOff -> Listing",
	toListPaged:               "Listing paged, at once",
	toListPagedConsistent:     `Listing paged at RV "", at once`,
	toListUnpaged:             "Listing unpaged, at once",
	toProbe:                   `BackingOff (probe) -> Listing at RV ""`,
	toResume:                  "the state it leads to",
	toStop:                    "Stopped",
}

// String is the verdict as doc.go's table writes it.
func (v verdict) String() string { return verdictNames[v] }

// Kinds that rows share.
var (
	// gone: the resourceVersion asked for is unusable, expired or ahead
	// of the server.
	gone = []Kind{KindExpired, KindTooLargeRV}
	// passing: failures that a List would meet too, and that pass.
	passing = []Kind{KindThrottled, KindNetwork, KindServerError, KindStoreRead}
)

// transitions is the table. Rows are tried in order; the first that
// matches decides. Every input matches some row: each phase ends with a
// row for any failure, and the last row takes a cancelled context in any
// state. Why the rows say what they say:
//
// Listing. A 410 Expired or "too large resource version" means the
// resourceVersion asked for is the problem: retry at once with a
// consistent read (RV ""), as client-go does. If the consistent read fails
// the same way, something else is wrong, so back off like for any other
// failure, and keep listing at "". A continue token that expires between
// pages (etcd compacted the snapshot the pages were cut from) discards the
// pages read and lists again, at once, in one unpaged request at the
// resourceVersion first asked for, as client-go's pager does.
//
// WatchList is an optimisation, and making progress by listing beats
// waiting for it: when it fails, a paged List follows at once. Transient
// failures (throttled, network, 5xx) would fail a list too, so those back
// off first, and the next attempt tries WatchList again.
//
// Watching. The rule that prevents relist storms: only the server saying
// "your resourceVersion is gone" (410) or "I do not have it yet" leads to
// a relist. Everything else (a cut connection, a 429, a 5xx, a restarted
// server) is retried as a watch from the last resourceVersion, after a
// backoff: once the server is back it almost always still has that
// history, and a watch costs it a fraction of a list. client-go relists
// after most of these (kubernetes/kubernetes#119646 saw 100k+ duplicate
// updates). A watchdog's restart needs no pause: the old stream is dead, a
// new one costs nothing, and if the server really is unreachable, opening
// it fails and that failure backs off.
//
// The one exception is a response the reflector could not understand
// (KindDecode): a frame the client refused, too large or malformed, or an
// ERROR event without a Status. Such a frame sits in the server's history
// at a fixed resourceVersion, and a watch from before it meets it again,
// every time, until the server compacts it away: the store would hear
// nothing more for as long. A relist moves the position past it. It is
// rare, and when it is not (a proxy that mangles every frame, say) the
// relists still come after a backoff that keeps growing while the failures
// go on: one list per Backoff.Max (30s by default) at worst, not a storm.
//
// After a 410 the relist is made at the last resourceVersion, not at "":
// a list "at least as fresh as RV" is valid even when RV has left the
// watch's history, and the watch cache can serve it. (This is client-go's
// choice too; the list falls back to "" if the server refuses.) It comes
// after a backoff, as in client-go, so that a server compacting faster
// than the reflector can list does not turn into a tight list loop.
//
// Three more failures of a watch are answered by a relist, each because the
// watch cannot go on telling the truth from where it is:
//
//   - An event older than the watch's position (KindRVBackwards, see
//     wentBack): storing it would tell handlers an old state as news, and
//     resuming from it would replay history the store already holds. The
//     event is dropped, and the relist is made at the last good
//     resourceVersion.
//   - A StorageReadError (KindStoreRead): the server could not read an
//     object, typically one an admin force-deleted as corrupt (KEP-3926).
//     No DELETED event will ever come for it, and a watch from the same
//     resourceVersion meets the same error again (a server sends it on
//     every new watch); only a snapshot drops the object. The relist is a
//     consistent read (RV ""): a list "at least as fresh as" the last
//     resourceVersion may come from an API server whose cache has not seen
//     the deletion yet, and still hold the object.
//   - A store that failed a resync (op store), while watching or backing
//     off: client-go relists here too, and so do we (see resyncNow).
//
// All three come after a backoff, so a server or store that repeats the
// fault costs one list per Backoff.Max at worst.
//
// A 404 for the resource itself (KindNotServed: its CRD was deleted, say)
// is answered by a probe, not a retry: the server will say 404 until
// someone serves the resource again, which may be never, so the reflector
// lists once every Backoff.Max or a little more (jittered), and reports
// the 404 once, not once per
// probe (Reflector.report). The probe is a consistent read, and the
// listing after it a relist: objects of a re-created resource are new
// objects, and a snapshot is the only way the store learns that the old
// ones are gone. (A deleted CRD's objects are deleted, each with its own
// event, before the 404; a watch that missed them relies on the relist.)
//
// A clean end is only "clean" once the watch lasted minWatchLife (see
// watchEndCause); before, it arrives as KindShortWatch and backs off.
var transitions = []transition{
	{state: "Listing", outcome: "snapshot stored", in: inListing, on: snapshotStored, then: toWatch},
	{state: "Listing", outcome: "404: the resource is not served", in: inListing, on: ioFailed, kinds: []Kind{KindNotServed}, then: toProbe},
	{state: "Listing", outcome: "410 on a page after the first", in: inListing, on: ioFailed, op: opList, kinds: []Kind{KindExpired}, later: true, then: toListUnpaged},
	{state: "Listing", outcome: `410 / too large RV, at RV != ""`, in: inListing, on: ioFailed, op: opList, kinds: gone, rv: someRV, then: toListConsistent},
	{state: "Listing", outcome: `410 / too large RV, at RV ""`, in: inListing, on: ioFailed, op: opList, kinds: gone, rv: emptyRV, then: toBackoffList},
	{state: "Listing", outcome: "WatchList: 429, 5xx, network", in: inListing, on: ioFailed, op: opWatchList, kinds: passing, then: toBackoffList},
	{state: "Listing", outcome: "WatchList: 410 / too large RV", in: inListing, on: ioFailed, op: opWatchList, kinds: gone, then: toListPagedConsistent},
	{state: "Listing", outcome: "WatchList: past its cap, no bookmark, refused", in: inListing, on: ioFailed, op: opWatchList, then: toListPaged},
	{state: "Listing", outcome: "continue token repeated, past a cap", in: inListing, on: ioFailed, op: opList, kinds: []Kind{KindDecode}, then: toBackoffList},
	{state: "Listing", outcome: "the store refused the snapshot", in: inListing, on: ioFailed, op: opStore, then: toBackoffList},
	{state: "Listing", outcome: "any other failure", in: inListing, on: ioFailed, then: toBackoffList},
	{state: "Watching", outcome: "normal close (server timeout)", in: inWatching, on: watchClosed, then: toWatch},
	{state: "Watching", outcome: "watchdog: silent too long", in: inWatching, on: ioFailed, kinds: []Kind{KindStuckWatch}, then: toWatch},
	{state: "Watching", outcome: "410 / too large RV", in: inWatching, on: ioFailed, kinds: gone, then: toBackoffRelist},
	{state: "Watching", outcome: "a frame it could not decode", in: inWatching, on: ioFailed, kinds: []Kind{KindDecode}, then: toBackoffRelist},
	{state: "Watching", outcome: "an event older than the watch's RV", in: inWatching, on: ioFailed, kinds: []Kind{KindRVBackwards}, then: toBackoffRelist},
	{state: "Watching", outcome: "500 StorageReadError", in: inWatching, on: ioFailed, kinds: []Kind{KindStoreRead}, then: toBackoffRelistConsistent},
	{state: "Watching", outcome: "the store failed a resync", in: inWatching, on: ioFailed, op: opStore, then: toBackoffRelist},
	{state: "Watching", outcome: "clean close within 1s (short watch)", in: inWatching, on: ioFailed, kinds: []Kind{KindShortWatch}, then: toBackoffWatch},
	{state: "Watching", outcome: "404: the resource is not served", in: inWatching, on: ioFailed, kinds: []Kind{KindNotServed}, then: toProbe},
	{state: "Watching", outcome: "429, 5xx, network, anything else", in: inWatching, on: ioFailed, then: toBackoffWatch},
	{state: "BackingOff", outcome: "time is up", in: inBackingOff, on: waitOver, then: toResume},
	{state: "BackingOff", outcome: "the store failed a resync", in: inBackingOff, on: ioFailed, op: opStore, then: toBackoffRelist},
	{state: "any", outcome: "context done", in: inAny, on: ctxDone, then: toStop},
}

// decide returns the row that answers in, in state s.
func decide(s state, in input) transition {
	p := phaseOf(s)
	for _, t := range transitions {
		if t.matches(p, in) {
			return t
		}
	}
	// Unreachable with the table above (TestEveryInputHasARow). Were an
	// input ever to miss every row, carrying on after a backoff neither
	// loops nor stops a reflector whose context is not done.
	switch p {
	case inListing:
		return transition{then: toBackoffList}
	case inWatching:
		return transition{then: toBackoffWatch}
	case inBackingOff:
		return transition{then: toResume}
	}
	return transition{then: toStop}
}

func (t transition) matches(p phase, in input) bool {
	switch {
	case t.in != inAny && t.in != p, t.on != in.what:
		return false
	case t.op != "" && t.op != in.op:
		return false
	case t.kinds != nil && !hasKind(t.kinds, in.kind):
		return false
	case t.rv == someRV && in.rv == "", t.rv == emptyRV && in.rv != "":
		return false
	case t.later && !in.laterPage:
		return false
	}
	return true
}

func hasKind(kinds []Kind, k Kind) bool {
	for _, x := range kinds {
		if x == k {
			return true
		}
	}
	return false
}

func phaseOf(s state) phase {
	switch s.(type) {
	case listing:
		return inListing
	case watching:
		return inWatching
	case backingOff:
		return inBackingOff
	}
	return inAny
}
