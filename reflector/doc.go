// Package reflector keeps a local store equal to one resource on a
// Kubernetes API server.
//
// # Its place in the pipeline
//
// An informer is a pipeline:
//
//	API server --(list, watch)--> Reflector --(Store calls)--> DeltaFIFO --> indexer --> handlers
//
// The reflector is the only part that talks to the server. It turns the
// server's two read verbs into calls on a Store: Replace with a complete
// snapshot, then Add, Update and Delete for each change, Bookmark for
// progress without a change, and, on a timer, Resync. The Store is an
// interface declared here, so this package does not depend on the queue
// behind it (package deltafifo in the shared informer, a map in a test).
//
// # The idea: a snapshot, then watch, and resume
//
// Every object on the server carries a resourceVersion (RV): the position,
// in etcd's single history of writes, of its last change. A list answers
// "everything, as of RV n". A watch answers "every change after RV n". So a
// reflector takes one snapshot, then watches from the snapshot's RV, and
// records the RV of each event it applies. By default the snapshot is a
// WatchList at RV "" (a watch that first replays the current state and
// marks its end with a bookmark, then carries on as the watch); where the
// server refuses it, a paged List at RV "0" (see "The figures" below, and
// docs/resourceversions.md). When the watch ends, as every watch eventually
// does, it opens a new one from the last RV it recorded and misses nothing.
//
// The server keeps only a window of history. A watch from an RV that has
// left the window is refused with 410 Gone ("Expired"); then the reflector
// must list again (relist) to learn what it missed. A few other failures
// also leave a watch unable to go on from where it is; the transition
// table below has every one, and transitions.go says why. Relists
// are expensive for the server, so much of the reflector's care goes into
// avoiding needless ones: it asks for BOOKMARK events, which advance the RV
// of a quiet watch, and it resumes with a watch, not a list, after network
// failures and server restarts.
//
// # The state machine
//
// The reflector is a state machine in the manner of etcd's raft and
// kube-rs's watcher: a closed set of state values, each carrying its own
// data (state.go), advanced by a step that does no I/O (machine.go). Listing
// holds the resourceVersion the store has reached and whether the next read
// must be consistent; Watching holds that resourceVersion and, after a
// WatchList, the stream still open; BackingOff holds the state it leads to
// and the delay; Stopped holds where a later Run resumes. Run is a thin loop
// around the step: it performs the I/O the current state asks for (list,
// watch, wait), hands what came of it to the step, and enters the state the
// step returns.
//
// What follows what happened is decided by one table (transitions.go),
// and by nothing else: which failures cause a relist, and why, is said
// there and only there. Each row matches one type of input (state.go) in
// one kind of state; the first row that matches decides. "Listing" is also
// Relisting: the same state, for every snapshot after the first. The
// table below is rendered from the rows (TestTransitionTableMatchesDoc).
// The table, row by row:
//
//	state       what happened                                      next state
//	----------  -------------------------------------------------  -----------------------------------------------
//	Idle        Run                                                Listing
//	Stopped     Run again, at a watch at RV "" or "0"              Relisting, at once
//	Stopped     Run again                                          where it stopped
//	Listing     snapshot stored                                    Watching, at once
//	Listing     404: the resource is not served                    BackingOff (probe) -> Relisting at RV ""
//	Listing     410 on a page after the first                      Listing unpaged, at once
//	Listing     410 / too large RV, at RV != ""                    Listing at RV "", at once
//	Listing     410 / too large RV, at RV ""                       BackingOff -> Listing
//	Listing     WatchList: 429, 5xx, network                       BackingOff -> Listing
//	Listing     WatchList: 410 / too large RV                      Listing paged at RV "", at once
//	Listing     WatchList: 400/405/422, no bookmark, past its cap  Listing paged, at once; Auto: no more WatchList
//	Listing     WatchList: any other failure                       Listing paged, at once
//	Listing     undecodable, continue token repeated, past a cap   BackingOff -> Listing
//	Listing     the store refused the snapshot                     BackingOff -> Listing
//	Listing     any other failure                                  BackingOff -> Listing
//	Watching    normal close or watchdog, at RV "" or "0"          Relisting, at once
//	Watching    normal close (server timeout)                      Watching, at once
//	Watching    watchdog: silent too long                          Watching, at once
//	Watching    410 / too large RV                                 BackingOff -> Relisting
//	Watching    a frame it could not decode                        BackingOff -> Relisting
//	Watching    an event older than the watch's RV                 BackingOff -> Relisting
//	Watching    500 StorageReadError                               BackingOff -> Relisting at RV ""
//	Watching    the store failed a resync                          BackingOff -> Relisting
//	Watching    404: the resource is not served                    BackingOff (probe) -> Relisting at RV ""
//	Watching    any other failure, at RV "" or "0"                 BackingOff -> Relisting
//	Watching    clean close within 1s (short watch)                BackingOff -> Watching
//	Watching    429, 5xx, network, anything else                   BackingOff -> Watching
//	BackingOff  time is up                                         the state it leads to
//	BackingOff  the store failed a resync                          BackingOff -> Relisting
//	any         context done                                       Stopped
//
// Time is an input: the reflector reads and waits on package time alone
// (time.Now, time.NewTimer, time.AfterFunc), so its tests run it inside
// testing/synctest bubbles, where time stands still while it works and
// moves only when the test lets it: minutes of backoffs, resyncs and
// watchdog silence pass in microseconds, at exact instants, and no test
// sleeps or polls. Randomness is an input too (Options.Rand). Run starts no goroutine: the machine runs on
// the caller's, and nothing outlives Run. (The resync and watchdog timers
// are AfterFunc timers, whose functions only set a flag and ring the
// reflector's alarm channel; they are stopped before Run returns.)
//
// # The watchdog
//
// A watch asks for bookmarks, so a live one is never silent for long: the
// API server sends one every minute on an idle watch. A watch that says
// nothing (no event, no bookmark) for longer than
// [Tunables.StuckWatchFactor] x [Tunables.BookmarkInterval], by default
// 3 x 1 minute, is presumed dead (a half-open TCP connection, a proxy that
// swallowed the stream): it is stopped, reported once as [KindStuckWatch],
// and a new watch is opened at once from the last RV (a relist if the
// watch was at "" or "0"; see the table above). Silence is counted in
// ticks of a quarter of the limit, so the watchdog acts between 3m and
// 3m45s after the last event, never early. A negative StuckWatchFactor
// turns it off; an informer sets both through Options.Reflector. Script:
// testdata/watchdog.txt.
//
// The watch loop is the hottest code in the package: it runs once per event.
// It is one select on the context, the alarm and the stream. While events
// keep coming, a fast path (receive_fast.go, a file a reader can skip) takes
// each with a receive on the result channel alone; every 64 events it serves
// the alarm, so a resync or a silent watch is never starved by a busy one.
//
// # The figures, and where they come from
//
// The behaviour and the numbers follow client-go v0.37's reflector:
//
//   - the first paged List (WatchList off or refused) is at RV "0"
//     (servable from the API server's watch cache), a first WatchList at
//     "", later lists at the last RV, and at "" (a consistent read)
//     when the server refused the last RV with 410 or "too large resource
//     version";
//   - lists are paged by 500, except at a specific RV, where only an unpaged
//     list can be served from the watch cache (Options.PageSize);
//   - watches carry allowWatchBookmarks=true and a timeoutSeconds drawn from
//     [5m, 10m) so that a fleet of clients does not reconnect in lockstep;
//   - retries back off from 800ms, doubling, to 30s, and reset after two
//     minutes without failure (Backoff); a server's Retry-After is a floor
//     on the wait, which we honour up to ten minutes;
//   - WatchList (sendInitialEvents=true) streams the initial state and ends
//     it with a BOOKMARK annotated k8s.io/initial-events-end: "true", after
//     which the same watch carries on.
//
// Beyond client-go: a WatchList that never sends its bookmark is abandoned
// after a bounded wait instead of hanging; a watch silent for longer than a
// few bookmark intervals is restarted (a stuck-watch watchdog); network
// failures and server restarts lead to a watch from the last RV, never to a
// relist; and Stats reports what the reflector did and where its time went.
//
// What a broken or hostile server cannot do (decisions.go holds each rule):
// keep it re-watching in a tight loop (a watch that ends cleanly within a
// second backs off, whatever it carried: watchEndCause); page for ever (a
// continue token seen before in the same list ends it: nextPage); or make
// one snapshot hold more than Options.MaxListItems objects or take more
// than MaxListPages pages (roomFor, nextPage). A ListerWatcher that can
// (ListAtMost, capabilities.go) is given each page's room under the cap
// and refuses a larger page before decoding it (pageRoom, pageRefused).
// A WatchList's initial events are folded by key, one entry per object,
// and capped like a list.
//
// # Errors
//
// Every failure is reported as an *Error with a Kind (errors.go) to
// Options.OnError and counted in Stats; none stops the reflector. The Kind
// is the one taxonomy: the transition table reads it, and the few sentinel
// errors callers test (ErrWrongType, ErrNoName, ErrDecode, ErrContinueLoop,
// ErrListTooLarge, ErrOutOfScope, ErrInvalidName) are finer names for one
// Kind each. Objects of the wrong type, or without metadata, are reported
// and skipped, never stored (KindWrongType).
//
// # What a server may put in the store
//
// Every object on its way to the store, list item or watch event, passes
// one check (admitObject): its type; a name and a namespace a real object
// can have (by apimachinery's rules, so that no two objects share a key and
// no key names a path); and the scope the ListerWatcher says it asked for,
// through an optional Scope method: its namespace, its label selector, and
// its field selector's rules on metadata.name and metadata.namespace
// (scope.go says why those alone). An object that fails is reported as
// KindRefused, counted in Stats, and skipped: never stored, never told to
// a handler. A refusal changes no state; the objects around it are kept.
package reflector
