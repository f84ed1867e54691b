package processor

import (
	"context"
	"runtime/debug"
	"sync/atomic"
	"time"
)

// batchLen is how many entries a handler's goroutine takes from the journal
// at a time, between two looks at the writer's progress.
const batchLen = 32

// Registration is one handler added to a Processor: its place in the
// journal, its goroutine's state and its statistics. It is the handle
// AddHandler returns, through which the caller asks whether the handler has
// synced, reads its stats and removes it.
//
// A Registration is safe for concurrent use.
type Registration struct {
	p            *Processor
	name         string
	handler      Handler
	resyncPeriod time.Duration // normalised; 0 means never

	// These fields are guarded by p.mu, because they change together with
	// the processor's list of registrations and its run state.
	nextResync time.Time // when the handler is next due for a resync
	started    bool      // a goroutine was started for this registration
	removed    bool      // Remove was called

	// syncAfterReplay is set when the handler is added after MarkSynced:
	// it is synced as soon as it has replayed initial. It is written before
	// the goroutine starts.
	syncAfterReplay bool

	// cur is the goroutine's position in the journal. It is set when the
	// handler joins, in AddHandler, and from then on only the goroutine
	// touches it (or remove, if the goroutine never started). atSeq mirrors
	// the number of cur's page, for Stats.
	cur   cursor
	atSeq atomic.Uint64

	// Counters for Pending. The handler is owed every plain notification
	// appended since it joined (the processor's plain count minus
	// plainAtJoin), plus extra: its initial replay and the resync
	// notifications of rounds it was due in. Both are raised before the
	// entries they count are published, so that Pending is never negative.
	plainAtJoin uint64
	extra       atomic.Uint64
	maxPending  atomic.Int64
	closed      atomic.Bool // removed, or goroutine exited: the backlog is dropped

	// parked is set while the goroutine sleeps, or is about to, waiting for
	// the journal to grow; a writer that clears it owes the goroutine a wake.
	parked atomic.Bool

	// The bounded backlog (see overflow.go). limit is 0 for a handler
	// that keeps every notification; bl is nil then. claimEnd is 0 while
	// the cursor claims every page of the journal; once the handler is
	// switched to its backlog, it is one past the number of the last page
	// the cursor still reads, and the writer pushes everything later to bl.
	// offJournal is set while the cursor has left the journal. coalesced
	// counts the notifications the handler will not be called for because
	// the backlog merged them away; Pending subtracts it.
	limit      int
	bl         *backlog
	claimEnd   atomic.Uint64
	offJournal atomic.Bool
	coalesced  atomic.Uint64

	// initial is replayed as Adds before the journal. It is written before the
	// goroutine starts and read only by the goroutine.
	initial InitialObjects

	wake   chan struct{} // capacity 1: "the journal has grown"
	stop   chan struct{} // closed by Remove
	done   chan struct{} // closed when the goroutine has exited (or will never run)
	synced chan struct{} // closed when the goroutine has handled the sync marker

	// Counters written only by the goroutine and read by Stats. They sit on
	// a cache line of their own, away from the fields the writer reads, so
	// that the two sides do not bounce one line between them on every
	// notification.
	_         [64]byte
	delivered atomic.Uint64
	panics    atomic.Uint64
	lastDur   atomic.Int64
	maxDur    atomic.Int64
	_         [64 - 32]byte
}

func newRegistration(p *Processor, h Handler, name string, period time.Duration, limit int, initial InitialObjects) *Registration {
	r := &Registration{
		p:            p,
		name:         name,
		handler:      h,
		resyncPeriod: period,
		limit:        limit,
		initial:      initial,
		wake:         make(chan struct{}, 1),
		stop:         make(chan struct{}),
		done:         make(chan struct{}),
		synced:       make(chan struct{}),
	}
	if limit > 0 {
		r.bl = newBacklog()
	}
	if initial != nil {
		r.extra.Store(uint64(initial.Len()))
		r.maxPending.Store(int64(initial.Len()))
	}
	return r
}

// Name returns the registration's name (HandlerOptions.Name or a generated one).
func (r *Registration) Name() string { return r.name }

// HasSynced reports whether the handler has caught up with the initial state:
// the processor was told the upstream cache finished its initial list
// (MarkSynced), and the handler has handled, or panicked on, every
// notification it was given before that point, including its initial replay.
// Once true it stays true. It is never true for a handler removed before
// syncing.
func (r *Registration) HasSynced() bool {
	select {
	case <-r.synced:
		return true
	default:
		return false
	}
}

// Synced returns a channel that is closed when HasSynced becomes true, so
// that callers can wait without polling. A handler removed before syncing
// never closes it: wait on it together with a context.
func (r *Registration) Synced() <-chan struct{} { return r.synced }

// Stats returns a snapshot of the handler's progress.
func (r *Registration) Stats() HandlerStats {
	st := HandlerStats{
		Name:               r.name,
		Delivered:          r.delivered.Load(),
		Panics:             r.panics.Load(),
		LastHandleDuration: time.Duration(r.lastDur.Load()),
		MaxHandleDuration:  time.Duration(r.maxDur.Load()),
		Coalesced:          r.coalesced.Load(),
	}
	if !r.closed.Load() {
		st.Pending = int(r.pending(st.Delivered))
		st.BufferCapacity = r.journalPages() * pageLen
		st.Coalescing = r.claimEnd.Load() != 0
	}
	st.MaxPending = int(r.raiseMaxPending(int64(st.Pending)))
	return st
}

// pending returns how many notifications the handler is owed beyond the
// delivered ones. delivered must be read before: it only grows, and what
// is owed, read after it, is never smaller.
//
// What the backlog merged away is subtracted, and read before what is
// owed: a merge is counted after the notification it merged was, so the
// owed count read after it covers it.
func (r *Registration) pending(delivered uint64) uint64 {
	merged := r.coalesced.Load()
	return r.p.j.plain.Load() - r.plainAtJoin + r.extra.Load() - delivered - merged
}

// journalPages returns how many journal pages the handler keeps alive: from
// its cursor's to the tail or, once switched to its backlog, to the last
// page it still reads.
func (r *Registration) journalPages() int {
	if r.offJournal.Load() {
		return 0
	}
	at := r.atSeq.Load()
	if end := r.claimEnd.Load(); end != 0 {
		return int(end - at)
	}
	return r.p.j.pagesFrom(at)
}

// raiseMaxPending records p as the highest Pending if it is, and returns
// the highest.
func (r *Registration) raiseMaxPending(p int64) int64 {
	for {
		m := r.maxPending.Load()
		if p <= m || r.maxPending.CompareAndSwap(m, p) {
			return max(m, p)
		}
	}
}

// Remove stops delivery to the handler and returns a channel that is closed
// once its goroutine has finished, including any Handle call in progress.
// Notifications not yet handled are dropped. Remove is idempotent: later calls
// return the same channel. Do not wait on the channel from inside the
// handler itself: the goroutine cannot finish while it is waiting.
func (r *Registration) Remove() <-chan struct{} {
	r.p.remove(r)
	return r.done
}

// run is the handler's goroutine: replay, then read the journal until the
// processor stops or the registration is removed.
func (r *Registration) run(ctx context.Context) {
	defer close(r.done)
	defer r.shutdown()
	if !r.replay(ctx) {
		return
	}
	if r.syncAfterReplay {
		// Removed or stopped during the last replayed object: the handler
		// never reached its sync point, as with the marker in handleEntry.
		if r.stopping(ctx) {
			return
		}
		close(r.synced)
	}
	for {
		if r.offJournal.Load() {
			if !r.drainBacklog(ctx) {
				return
			}
			continue
		}
		es, last := r.cur.next(r.p.j, batchLen, &r.claimEnd)
		if last {
			r.leaveJournal()
			continue
		}
		if seq := r.cur.page.seq.Load(); seq != r.atSeq.Load() {
			r.atSeq.Store(seq) // the cursor moved to a new page
		}
		if es == nil {
			if !r.park(ctx) {
				return
			}
			continue
		}
		r.raiseMaxPending(int64(r.pending(r.delivered.Load())))
		clock := r.p.watch.read()
		for i := range es {
			if r.stopping(ctx) {
				return
			}
			clock = r.handleEntry(&es[i], clock)
		}
	}
}

// park waits until the journal grows past the cursor, and reports false if
// the goroutine must exit instead.
//
// The handshake with the writer (Processor.wakeSleepers): the goroutine
// raises parked and counts itself asleep, then looks at the journal once
// more; the writer publishes an entry, then looks at the count. Whichever
// goes second sees the other's move, so an entry is never left unread by a
// sleeping goroutine. The one that lowers parked settles the count, and if
// it is the writer, it also sends the wake.
func (r *Registration) park(ctx context.Context) bool {
	r.parked.Store(true)
	r.p.sleepers.Add(1)
	if r.cur.ready() && r.unpark() {
		return true
	}
	select {
	case <-ctx.Done():
		r.unpark()
		return false
	case <-r.stop:
		r.unpark()
		return false
	case <-r.wake:
		return true
	}
}

// unpark lowers parked if it is still raised, and reports whether it was.
func (r *Registration) unpark() bool {
	if r.parked.CompareAndSwap(true, false) {
		r.p.sleepers.Add(-1)
		return true
	}
	return false
}

// replay delivers the initial objects as Adds flagged InInitialList. It runs
// on the handler's goroutine so that AddHandler returns at once: a late
// handler's O(N) catch-up costs its own time, not the pipeline's. It reports
// false if the processor stopped meanwhile.
func (r *Registration) replay(ctx context.Context) bool {
	initial := r.initial
	r.initial = nil // the goroutine is the only reader; let the state go when done
	if initial == nil {
		return true
	}
	clock := r.p.watch.read()
	i := 0
	for key, obj := range initial.All() {
		if r.stopping(ctx) {
			return false
		}
		// The live stream piles up behind the replay: observe the backlog
		// once per batchLen objects, as run does once per batch, so that
		// MaxPending misses a peak by at most one batch here too.
		if i%batchLen == 0 {
			r.raiseMaxPending(int64(r.pending(r.delivered.Load())))
		}
		i++
		clock = r.deliver(Notification{Type: Add, Key: key, Object: obj, InInitialList: true}, clock)
	}
	return true
}

// stopping reports whether the goroutine must exit before the next
// notification. It is called once per notification, so it polls each
// channel in its own single-case select: the runtime answers those without
// taking the channel's lock, whereas one select over both channels locks
// them both.
func (r *Registration) stopping(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	default:
	}
	select {
	case <-r.stop:
		return true
	default:
		return false
	}
}

// handleEntry delivers a notification meant for the handler or, for the
// sync marker, records that the handler has synced. clock is as for deliver.
func (r *Registration) handleEntry(e *entry, clock time.Duration) time.Duration {
	if e.isMarker() {
		r.reachedMarker()
		return clock
	}
	if !e.isFor(r) {
		return clock
	}
	return r.deliver(e.n, clock)
}

// reachedMarker records that the handler has handled everything before the
// sync marker.
func (r *Registration) reachedMarker() {
	select {
	case <-r.synced: // already closed; MarkSynced places one marker, but be safe
	default:
		close(r.synced)
	}
}

// deliver calls the handler once and records how it went. start is a clock
// reading taken just before: the end of the previous Handle call when the
// handler runs back to back, so each notification costs one clock read, not
// two (on some machines a clock read is a third of the per-delivery cost).
// It returns the reading taken when Handle returned.
func (r *Registration) deliver(n Notification, start time.Duration) (end time.Duration) {
	if r.call(n) {
		r.panics.Add(1)
	}
	end = r.p.watch.read()
	d := int64(end - start)
	r.lastDur.Store(d)
	if d > r.maxDur.Load() { // only this goroutine writes maxDur
		r.maxDur.Store(d)
	}
	r.delivered.Store(r.delivered.Load() + 1) // only this goroutine writes it: no read-modify-write needed
	return end
}

// call runs the handler and turns a panic into a reported error, so that the
// goroutine survives and moves on to the next notification.
func (r *Registration) call(n Notification) (panicked bool) {
	defer func() {
		if v := recover(); v != nil {
			panicked = true
			r.p.opts.OnError(&HandlerPanicError{
				Handler: r.name, Type: n.Type, Key: n.Key, Value: v,
				Stack: debug.Stack(), // still inside the panic: shows where it happened
			})
		}
	}()
	r.handler.Handle(n)
	return false
}

// shutdown runs when the goroutine exits: it drops the backlog, and the
// cursor, so that the journal's pages are not kept alive for it.
func (r *Registration) shutdown() {
	r.p.closeBacklog(r)
	r.p.j.leave(&r.cur)
}
