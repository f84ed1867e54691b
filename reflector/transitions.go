package reflector

// The transition table: the one place that decides what follows what
// happened, failures included, and the one place that says what causes a
// relist. Each row matches an input's type (state.go's closed set) in a
// kind of state, narrowed by the failure's Kind and a few conditions, and
// names the verdict, which builds the next state: step does nothing else.
// doc.go's table is rendered from these rows (TestTransitionTableMatchesDoc;
// go test -run that -rewrite writes it), and testdata/README.md maps each
// row to the scripts that show it (TestReadmeMapsEveryRow).

// transition is one row: in a kind of state (in), on an input of one of
// the types on, narrowed by kinds, rv, later and when, the machine does
// then.
type transition struct {
	// outcome is the row's second column in doc.go; the first is in's
	// name, the third then's.
	outcome string

	in    phase
	on    []inputKind
	kinds []Kind // failures: the kinds covered, nil for any (other inputs pass)
	rv    rvIs   // listFailed: the resourceVersion asked for
	later bool   // listFailed: only a page after the first
	// when narrows the row further; nil for always.
	when func(s state, in input) bool
	then *verdict
}

// phase is the kind of state a row applies to.
type phase int

const (
	inIdle phase = iota
	inListing
	inWatching
	inBackingOff
	inStopped
	inAny
)

var phaseNames = [...]string{
	inIdle: "Idle", inListing: "Listing", inWatching: "Watching",
	inBackingOff: "BackingOff", inStopped: "Stopped", inAny: "any",
}

// String is the phase as doc.go's table writes it.
func (p phase) String() string { return phaseNames[p] }

// rvIs narrows a row on the resourceVersion a failed list asked for.
type rvIs int

const (
	anyRV   rvIs = iota
	someRV       // a position: "0" or a specific resourceVersion
	emptyRV      // "": a consistent read
)

// verdict is what the machine does after a row matched: its name, as
// doc.go's table writes it, and the next state it builds from the state
// and the input.
type verdict struct {
	name string
	next func(m *machine, s state, in input) state
}

// String is the verdict as doc.go's table writes it.
func (v *verdict) String() string { return v.name }

// The verdicts.
var (
	// toFirstList: the first listing.
	toFirstList = &verdict{"Listing", func(*machine, state, input) state { return listing{} }}
	// toResumeStopped: the state the last Run stopped in or was waiting
	// for: a watch from the store's resourceVersion (its stream was
	// closed), or the listing, which tries WatchList again.
	toResumeStopped = &verdict{"where it stopped", func(m *machine, s state, _ input) state {
		switch r := heading(s).(type) {
		case watching:
			return watching{rv: r.rv}
		case listing:
			r.via = viaAny
			return r
		}
		return listing{relist: m.synced}
	}}
	// toWatchSnapshot: watch from the snapshot just stored (with the
	// stream a WatchList left open, if any). The machine learns that the
	// store is synced, and whether the server pages lists at "0".
	toWatchSnapshot = &verdict{"Watching, at once", func(m *machine, _ state, in input) state {
		st := in.(snapshotStored)
		m.synced = true
		m.notServed = false
		m.paginatedBefore = m.paginatedBefore || st.paged
		return watching{rv: st.rv, stream: st.stream}
	}}
	// toWatch: watch again from where the store is, at once.
	toWatch = &verdict{"Watching, at once", func(_ *machine, s state, _ input) state {
		return watching{rv: s.(watching).rv}
	}}
	// toRelist: relist at the store's resourceVersion, at once.
	toRelist = &verdict{"Relisting, at once", func(_ *machine, s state, _ input) state {
		return relistFrom(heading(s), false)
	}}
	// toBackoffWatch: back off, then watch from where the store is.
	toBackoffWatch = &verdict{"BackingOff -> Watching", func(m *machine, s state, in input) state {
		return m.backOff(watching{rv: s.(watching).rv}, in)
	}}
	// toBackoffRelist: back off, then relist at the last resourceVersion.
	toBackoffRelist = &verdict{"BackingOff -> Relisting", func(m *machine, s state, in input) state {
		return m.backOff(relistFrom(heading(s), false), in)
	}}
	// toBackoffRelistConsistent: back off, then relist with a consistent
	// read (RV "").
	toBackoffRelistConsistent = &verdict{`BackingOff -> Relisting at RV ""`, func(m *machine, s state, in input) state {
		return m.backOff(relistFrom(heading(s), true), in)
	}}
	// toListConsistent: the same listing again at once, as a consistent
	// read (RV "").
	toListConsistent = &verdict{`Listing at RV "", at once`, func(_ *machine, s state, _ input) state {
		l := s.(listing)
		return listing{rv: l.rv, consistent: true, relist: l.relist}
	}}
	// toBackoffList: back off, then the same listing again (WatchList
	// tried again).
	toBackoffList = &verdict{"BackingOff -> Listing", func(m *machine, s state, in input) state {
		l := s.(listing)
		l.via = viaAny
		return m.backOff(l, in)
	}}
	// toListPaged: a paged List at once, instead of the WatchList that
	// failed.
	toListPaged = &verdict{"Listing paged, at once", func(_ *machine, s state, _ input) state {
		return pagedFrom(s, false)
	}}
	// toListPagedRefused: toListPaged, and in WatchListAuto mode, no
	// WatchList for the rest of the reflector's life.
	toListPagedRefused = &verdict{"Listing paged, at once; Auto: no more WatchList", func(m *machine, s state, _ input) state {
		m.watchListRefused = m.watchListRefused || m.autoWatchList
		return pagedFrom(s, false)
	}}
	// toListPagedConsistent: toListPaged, as a consistent read.
	toListPagedConsistent = &verdict{`Listing paged at RV "", at once`, func(_ *machine, s state, _ input) state {
		return pagedFrom(s, true)
	}}
	// toListUnpaged: the same list again at once, in one request.
	toListUnpaged = &verdict{"Listing unpaged, at once", func(_ *machine, s state, _ input) state {
		l := s.(listing)
		l.via = viaUnpaged
		return l
	}}
	// toProbe: wait Backoff.Max (jittered up to twice that, see
	// backoffState.probe), then relist with a consistent read: the
	// resource is not served, and a probe at the slowest pace finds out
	// when it is again.
	toProbe = &verdict{`BackingOff (probe) -> Relisting at RV ""`, func(m *machine, s state, in input) state {
		f, _ := faultOf(in)
		probe := relistFrom(heading(s), true)
		probe.relist = m.synced
		return backingOff{then: probe, delay: m.backoff.probe(f.now, m.draw())}
	}}
	// toResume: enter the state the wait led to.
	toResume = &verdict{"the state it leads to", func(_ *machine, s state, _ input) state {
		return s.(backingOff).then
	}}
	// toStop: Run returns; a later Run resumes where this one was heading.
	toStop = &verdict{"Stopped", func(_ *machine, s state, _ input) state {
		return stopped{resume: heading(s)}
	}}
)

// Kinds that rows share.
var (
	// gone: the resourceVersion asked for is unusable, expired or ahead
	// of the server.
	gone = []Kind{KindExpired, KindTooLargeRV}
	// passing: failures that a List would meet too, and that pass.
	passing = []Kind{KindThrottled, KindNetwork, KindServerError, KindStoreRead}
)

// Input types that rows share.
var (
	closedOrSilent = []inputKind{onWatchClosed, onWatchFailed}
	anyFailure     = []inputKind{onListFailed, onWatchListFailed, onWatchFailed, onStoreFailed}
)

// noPosition: the watch the state is in (or a stopped Run was in) is at
// "" or "0", which a watch cannot resume from (see replaysState).
func noPosition(s state, _ input) bool {
	w, ok := heading(s).(watching)
	return ok && replaysState(w.rv)
}

// watchListRefusal: the server showed it does not support WatchList.
func watchListRefusal(_ state, in input) bool {
	f, _ := faultOf(in)
	return refusesWatchList(f.err)
}

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
// Watching. What causes a relist (this is the one place that says it; the
// rest of the module links here): a watch is answered by a relist only
// when it cannot go on telling the truth from where it is: the server says
// "your resourceVersion is gone" (410) or "I do not have it yet" (too
// large RV); a frame it could not decode; an event older than the watch's
// position; a StorageReadError; a store that failed a resync; or a
// position that is none ("" or "0", below). Each is explained here.
// Everything else (a cut connection, a 429, a 5xx, a restarted server) is
// retried as a watch from the last resourceVersion, after a backoff; this
// is what prevents relist storms: once the server is back it almost always still has that
// history, and a watch costs it a fraction of a list. client-go relists
// after most of these (kubernetes/kubernetes#119646 saw 100k+ duplicate
// updates). A watchdog's restart needs no pause: the old stream is dead, a
// new one costs nothing, and if the server really is unreachable, opening
// it fails and that failure backs off.
//
// A response the reflector could not understand
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
// Three more failures of a watch are answered by a relist:
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
// A watch needs a position to resume from. When the store's
// resourceVersion is "" or "0", no position at all, a watch would not
// resume: it would start over with synthetic ADDED events for what exists
// now, and objects deleted in between would never be reported, so the
// store would keep them for ever. That happens when nothing since the last
// snapshot carried a resourceVersion (an empty server answers a WatchList
// with a bookmark at "0"), or while a watch from "0" was still replaying
// (see replaysState). So every row that would watch again from such a
// position is preceded by one that relists instead ("at RV "" or "0""):
// only a relist, whose Replace removes what is gone, recovers from there.
//
// A WatchList refused in a way that shows the server does not support it
// (see refusesWatchList) is, in WatchListAuto mode, not tried again for the
// reflector's life: its verdict records that.
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
//
// Run. The first Run lists. A later one picks up where the last stopped:
// the watch it was in or waiting for, from the store's resourceVersion (no
// relist), or the listing it was in or waiting for, which tries WatchList
// again.
var transitions = []transition{
	{in: inIdle, on: on(onRunStarted), outcome: "Run", then: toFirstList},
	{in: inStopped, on: on(onRunStarted), when: noPosition, outcome: `Run again, at a watch at RV "" or "0"`, then: toRelist},
	{in: inStopped, on: on(onRunStarted), outcome: "Run again", then: toResumeStopped},
	{in: inListing, on: on(onSnapshotStored), outcome: "snapshot stored", then: toWatchSnapshot},
	{in: inListing, on: on(onListFailed, onWatchListFailed), kinds: []Kind{KindNotServed}, outcome: "404: the resource is not served", then: toProbe},
	{in: inListing, on: on(onListFailed), kinds: []Kind{KindExpired}, later: true, outcome: "410 on a page after the first", then: toListUnpaged},
	{in: inListing, on: on(onListFailed), kinds: gone, rv: someRV, outcome: `410 / too large RV, at RV != ""`, then: toListConsistent},
	{in: inListing, on: on(onListFailed), kinds: gone, rv: emptyRV, outcome: `410 / too large RV, at RV ""`, then: toBackoffList},
	{in: inListing, on: on(onWatchListFailed), kinds: passing, outcome: "WatchList: 429, 5xx, network", then: toBackoffList},
	{in: inListing, on: on(onWatchListFailed), kinds: gone, outcome: "WatchList: 410 / too large RV", then: toListPagedConsistent},
	{in: inListing, on: on(onWatchListFailed), when: watchListRefusal, outcome: "WatchList: 400/405/422, no bookmark, past its cap", then: toListPagedRefused},
	{in: inListing, on: on(onWatchListFailed), outcome: "WatchList: any other failure", then: toListPaged},
	{in: inListing, on: on(onListFailed), kinds: []Kind{KindDecode}, outcome: "undecodable, continue token repeated, past a cap", then: toBackoffList},
	{in: inListing, on: on(onStoreFailed), outcome: "the store refused the snapshot", then: toBackoffList},
	{in: inListing, on: anyFailure, outcome: "any other failure", then: toBackoffList},
	{in: inWatching, on: closedOrSilent, kinds: []Kind{KindStuckWatch}, when: noPosition, outcome: `normal close or watchdog, at RV "" or "0"`, then: toRelist},
	{in: inWatching, on: on(onWatchClosed), outcome: "normal close (server timeout)", then: toWatch},
	{in: inWatching, on: on(onWatchFailed), kinds: []Kind{KindStuckWatch}, outcome: "watchdog: silent too long", then: toWatch},
	{in: inWatching, on: on(onWatchFailed), kinds: gone, outcome: "410 / too large RV", then: toBackoffRelist},
	{in: inWatching, on: on(onWatchFailed), kinds: []Kind{KindDecode}, outcome: "a frame it could not decode", then: toBackoffRelist},
	{in: inWatching, on: on(onWatchFailed), kinds: []Kind{KindRVBackwards}, outcome: "an event older than the watch's RV", then: toBackoffRelist},
	{in: inWatching, on: on(onWatchFailed), kinds: []Kind{KindStoreRead}, outcome: "500 StorageReadError", then: toBackoffRelistConsistent},
	{in: inWatching, on: on(onStoreFailed), outcome: "the store failed a resync", then: toBackoffRelist},
	{in: inWatching, on: on(onWatchFailed), kinds: []Kind{KindNotServed}, outcome: "404: the resource is not served", then: toProbe},
	{in: inWatching, on: on(onWatchFailed), when: noPosition, outcome: `any other failure, at RV "" or "0"`, then: toBackoffRelist},
	{in: inWatching, on: on(onWatchFailed), kinds: []Kind{KindShortWatch}, outcome: "clean close within 1s (short watch)", then: toBackoffWatch},
	{in: inWatching, on: anyFailure, outcome: "429, 5xx, network, anything else", then: toBackoffWatch},
	{in: inBackingOff, on: on(onWaitOver), outcome: "time is up", then: toResume},
	{in: inBackingOff, on: on(onStoreFailed), outcome: "the store failed a resync", then: toBackoffRelist},
	{in: inAny, on: on(onCtxDone), outcome: "context done", then: toStop},
}

// on lists the input types a row matches.
func on(kinds ...inputKind) []inputKind { return kinds }

// decide returns the row that answers in, in state s.
func decide(s state, in input) transition {
	p := phaseOf(s)
	for _, t := range transitions {
		if t.matches(p, s, in) {
			return t
		}
	}
	// Unreachable with the table above (TestEveryInputHasARow). Were an
	// input ever to miss every row, carrying on after a backoff neither
	// loops nor stops a reflector whose context is not done.
	switch p {
	case inIdle:
		return transition{then: toFirstList}
	case inListing:
		return transition{then: toBackoffList}
	case inWatching:
		return transition{then: toBackoffWatch}
	case inBackingOff:
		return transition{then: toResume}
	case inStopped:
		return transition{then: toResumeStopped}
	}
	return transition{then: toStop}
}

func (t transition) matches(p phase, s state, in input) bool {
	if t.in != inAny && t.in != p || !hasInput(t.on, in.on()) {
		return false
	}
	if f, ok := faultOf(in); ok && t.kinds != nil && !hasKind(t.kinds, f.kind) {
		return false
	}
	if t.rv != anyRV || t.later {
		l, _ := in.(listFailed)
		switch {
		case t.rv == someRV && l.rv == "", t.rv == emptyRV && l.rv != "":
			return false
		case t.later && !l.laterPage:
			return false
		}
	}
	return t.when == nil || t.when(s, in)
}

func hasInput(kinds []inputKind, k inputKind) bool {
	for _, x := range kinds {
		if x == k {
			return true
		}
	}
	return false
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
	case idle:
		return inIdle
	case listing:
		return inListing
	case watching:
		return inWatching
	case backingOff:
		return inBackingOff
	case stopped:
		return inStopped
	}
	return inAny
}
