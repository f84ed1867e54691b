package processor

import (
	"context"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// batchLen is how many entries a handler's goroutine takes from its buffer
// per lock acquisition.
const batchLen = 32

// Registration is one handler added to a Processor: its buffer, its
// goroutine's state and its statistics. It is the handle AddHandler returns,
// through which the caller asks whether the handler has synced, reads its
// stats and removes it.
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

	// resyncDue is written by ShouldResync (under p.mu) and read by
	// Distribute without any lock, so that distributing a resync does not
	// serialise on the processor's mutex.
	resyncDue atomic.Bool

	mu         sync.Mutex // guards buf, pushed, maxPending and closed
	buf        buffer
	pushed     uint64 // notifications ever given to the handler, replay included
	maxPending int
	closed     bool // no more pushes are accepted: removed, or goroutine exited

	// initial is replayed as Adds before the buffer. It is written before the
	// goroutine starts and read only by the goroutine.
	initial State

	wake   chan struct{} // capacity 1: "the buffer is no longer empty"
	stop   chan struct{} // closed by Remove
	done   chan struct{} // closed when the goroutine has exited (or will never run)
	synced chan struct{} // closed when the goroutine has handled the sync marker

	// Counters written only by the goroutine and read by Stats (push reads
	// delivered too); atomics because taking r.mu once more per
	// notification would double the locking cost. Pending is pushed - delivered: no
	// counter is written by both the distributor and the goroutine. They
	// sit on a cache line of their own, away from mu and buf, which the
	// distributor writes, so that the two sides do not bounce one line
	// between them on every notification.
	_         [64]byte
	delivered atomic.Uint64
	panics    atomic.Uint64
	lastDur   atomic.Int64
	maxDur    atomic.Int64
	_         [64 - 32]byte
}

func newRegistration(p *Processor, h Handler, name string, period time.Duration, initial State) *Registration {
	r := &Registration{
		p:            p,
		name:         name,
		handler:      h,
		resyncPeriod: period,
		initial:      initial,
		wake:         make(chan struct{}, 1),
		stop:         make(chan struct{}),
		done:         make(chan struct{}),
		synced:       make(chan struct{}),
	}
	if initial != nil {
		r.pushed = uint64(initial.Len())
		r.maxPending = initial.Len()
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
	// delivered first: it only grows, so pushed, read after it, is never
	// smaller, and Pending never negative.
	delivered := r.delivered.Load()
	r.mu.Lock()
	pushed, maxPending, capacity := r.pushed, r.maxPending, r.buf.capacity()
	r.mu.Unlock()
	return HandlerStats{
		Name:               r.name,
		Pending:            int(pushed - delivered),
		MaxPending:         maxPending,
		Delivered:          delivered,
		Panics:             r.panics.Load(),
		LastHandleDuration: time.Duration(r.lastDur.Load()),
		MaxHandleDuration:  time.Duration(r.maxDur.Load()),
		BufferCapacity:     capacity,
	}
}

// Remove stops delivery to the handler and returns a channel that is closed
// once its goroutine has finished, including any Handle call in progress.
// Notifications still buffered are dropped. Remove is idempotent: later calls
// return the same channel. Do not wait on the channel from inside the
// handler itself: the goroutine cannot finish while it is waiting.
func (r *Registration) Remove() <-chan struct{} {
	r.p.remove(r)
	return r.done
}

// push appends e to the buffer and wakes the goroutine if it may be asleep.
// It never blocks on the handler: this is the O(1) step Distribute takes per
// handler.
func (r *Registration) push(n *Notification) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	// The goroutine sleeps only after finding the buffer empty under r.mu,
	// so only a push onto an empty buffer needs to wake it.
	wasEmpty := r.buf.len() == 0
	r.buf.push(n)
	if n != r.p.marker {
		r.pushed++
		if p := int(r.pushed - r.delivered.Load()); p > r.maxPending {
			r.maxPending = p
		}
	}
	r.mu.Unlock()
	if wasEmpty {
		select {
		case r.wake <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
}

// run is the handler's goroutine: replay, then drain the buffer until the
// processor stops or the registration is removed.
func (r *Registration) run(ctx context.Context) {
	defer close(r.done)
	defer r.shutdown()
	if !r.replay(ctx) {
		return
	}
	batch := make([]*Notification, batchLen)
	for {
		r.mu.Lock()
		n := r.buf.popInto(batch)
		r.mu.Unlock()
		if n == 0 {
			select {
			case <-ctx.Done():
				return
			case <-r.stop:
				return
			case <-r.wake:
				continue
			}
		}
		clock := r.p.watch.read()
		for i := range batch[:n] {
			if r.stopping(ctx) {
				return
			}
			clock = r.handleEntry(batch[i], clock)
			batch[i] = nil // release the objects for the garbage collector
		}
	}
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
	for key, obj := range initial.All() {
		if r.stopping(ctx) {
			return false
		}
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

// handleEntry delivers a notification or, for the sync marker, records that
// the handler has synced. clock is as for deliver.
func (r *Registration) handleEntry(n *Notification, clock time.Duration) time.Duration {
	if n != r.p.marker {
		return r.deliver(*n, clock)
	}
	select {
	case <-r.synced: // already closed; MarkSynced places one marker, but be safe
	default:
		close(r.synced)
	}
	return clock
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

// shutdown runs when the goroutine exits: it refuses further pushes and drops
// what is buffered.
func (r *Registration) shutdown() {
	r.mu.Lock()
	r.closed = true
	r.buf.reset()
	r.pushed = r.delivered.Load() // the backlog is dropped: nothing pending
	r.mu.Unlock()
}

// close refuses further pushes and, if the goroutine never started (and so
// never will), also drops the buffer. Called by the processor under p.mu.
func (r *Registration) close(started bool) {
	r.mu.Lock()
	r.closed = true
	if !started {
		r.buf.reset()
		r.pushed = r.delivered.Load()
	}
	r.mu.Unlock()
}
