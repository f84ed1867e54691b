// Package processor fans an informer's notifications out to its handlers,
// each at its own pace.
//
// # Place in the pipeline
//
//	reflector -> deltafifo -> indexer -> processor -> handlers
//
// The informer pops changes from its DeltaFIFO, applies them to its indexer
// (the cache), and then tells the processor what happened: an object was
// added, updated or deleted. The processor's only job is to pass that on to
// every registered handler without letting any one of them hold up the
// informer or the other handlers.
//
// # One goroutine per handler, one journal for all
//
// A handler might enqueue a key in a microsecond or call a remote service for
// a second. If the informer called handlers directly, the slowest one would
// set the pace for the cache and for all the others. So each handler gets
// its own goroutine, reading at its own pace.
//
// What the goroutines read is one shared journal: an append-only list of
// fixed-size pages of notifications. Distribute appends a notification once,
// by value, and returns; each handler has a cursor, and its backlog is the
// part of the journal between its cursor and the end. (client-go gives each
// handler its own buffer and appends to every one of them, so distributing
// costs O(handlers).) A slow handler holds up nobody: it only keeps more
// pages alive, up to its backlog limit (see Bounded backlogs). Its
// Registration.Stats exposes the backlog (Pending, MaxPending, handling
// times) so that the lag is visible rather than guessed.
//
// The journal gives memory back. Each page counts
// the cursors that have yet to leave it; the last to leave empties it and
// hands it back for reuse, so a handler that drains a burst returns the
// burst's memory as it goes. After the burst the journal is back to a few
// pages (client-go's buffers keep their peak size forever,
// kubernetes#122067). A handler removed while stuck in Handle stops
// claiming new pages at once, so it cannot make the journal grow either.
//
// # Bounded backlogs
//
// A handler that falls far behind would make the journal keep every
// notification it has not read: memory in proportion to events. So each
// handler has a limit (HandlerOptions.BacklogLimit, DefaultBacklogLimit
// notifications by default), checked each time the journal starts a page.
// Past it, the handler reads the journal only up to that page and is then
// given a backlog of its own, which holds at most one notification per key:
// a key that changes again while it waits joins its pending notification,
// as deltas do in the informer's queue. Once the handler has emptied its
// backlog it joins the journal again. So a handler stuck for good keeps at
// most its limit (plus a page) of notifications in the journal, and one per
// changed key in its backlog. overflow.go has the steps.
//
// What a handler may see while it coalesces (merge.go's mergeRules are the
// table):
//
//   - every object it was told about ends at its newest version, and an
//     Update's Old is always the version it was told about last;
//   - a Delete of an object it was told about is never merged away; a
//     re-creation after it comes as a second notification, after the Delete;
//   - an object created and deleted while it waited is not mentioned at all;
//   - intermediate versions are skipped, and keys are delivered in the order
//     they first entered the backlog, so two keys' changes may arrive in
//     another order than they happened;
//   - HasSynced still means it has been told the whole initial state.
//
// Registration.Stats reports Coalesced (notifications merged away) and
// Coalescing. A handler that needs every version sets
// HandlerOptions.KeepAllUpdates and accepts the unbounded journal.
//
// # Knowing when a handler has caught up
//
// The informer calls MarkSynced once its cache holds the initial list. At
// that moment the processor appends a marker to the journal, behind the
// initial notifications. When a handler's goroutine reaches the marker, the
// handler has seen the whole initial state: its
// Registration.HasSynced becomes true and its Synced channel closes. A handler
// that panics still moves past its notifications, so it still syncs (in
// client-go it never does, kubernetes#129024).
//
// # Panics
//
// A panic in a handler is recovered on the handler's goroutine and reported
// to Options.OnError as a *HandlerPanicError naming the handler and the
// object's key. The goroutine then continues with the next notification.
//
// # Late handlers
//
// A handler added while the informer runs needs the current state first. The
// informer passes an immutable snapshot of its cache (an InitialObjects,
// taken in O(1)) to AddHandler; the handler joins the journal at its end at
// that moment, and its own goroutine replays the snapshot as Adds with
// InInitialList set, then continues with the live stream, which the journal
// has been keeping for it meanwhile. Nothing else waits for the replay.
//
// # Resync
//
// A handler may ask to be re-sent every cached object periodically
// (HandlerOptions.ResyncPeriod), as an Update whose Old and Object are the
// same. Periods are per handler: ShouldResync(now) records which handlers
// are due, and a Distribute with isSync set appends a notification addressed
// to those only; the others skip it. This package is where a resync is
// decided (resync.go has the schedule); the reflector's timer, the queue's
// Sync deltas and the informer only carry it out, as docs/architecture.md
// ("Resync") follows step by step.
//
// # Lifecycle
//
// Handlers added before Run start with Run. Run blocks until its context is
// done and every handler goroutine has returned; notifications not yet
// handled are then dropped. Registration.Remove stops one handler and returns a channel
// closed when its goroutine is gone. No goroutine outlives Run.
package processor
