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
// # One goroutine and one buffer per handler
//
// A handler might enqueue a key in a microsecond or call a remote service for
// a second. If the informer called handlers directly, the slowest one would
// set the pace for the cache and for all the others. So each handler gets
// its own goroutine and its own unbounded buffer: Distribute appends the
// notification to every buffer and returns, and each goroutine drains its
// buffer in order. A slow handler only grows its own backlog, which its
// Registration.Stats exposes (Pending, MaxPending, handling times) so that
// the lag is visible rather than guessed.
//
// Unbounded means memory, so the buffer gives memory back: it is a list of
// fixed-size chunks, and drained chunks are released. After a burst the
// buffer shrinks to at most two chunks (client-go's ring buffer keeps its
// peak size forever, kubernetes#122067).
//
// # Knowing when a handler has caught up
//
// The informer calls MarkSynced once its cache holds the initial list. At
// that moment the processor places a marker in every handler's buffer,
// behind the initial notifications. When a handler's goroutine reaches its
// marker, the handler has seen the whole initial state: its
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
// informer passes an immutable snapshot of its cache (a State, taken in O(1))
// to AddHandler; the handler's own goroutine replays it as Adds with
// InInitialList set, then continues with the live stream, which Distribute
// has been buffering meanwhile. Nothing else waits for the replay.
//
// # Resync
//
// A handler may ask to be re-sent every cached object periodically
// (HandlerOptions.ResyncPeriod), as an Update whose Old and Object are the
// same. Periods are per handler: ShouldResync(now) marks which handlers are
// due, and a Distribute with isSync set reaches only those. The exact
// schedule is described in resync.go.
//
// # Lifecycle
//
// Handlers added before Run start with Run. Run blocks until its context is
// done and every handler goroutine has returned; buffered notifications are
// then dropped. Registration.Remove stops one handler and returns a channel
// closed when its goroutine is gone. No goroutine outlives Run.
package processor
