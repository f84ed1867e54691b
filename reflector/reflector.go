package reflector

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

// Reflector keeps a Store equal to one resource on an API server: it lists,
// then watches, and resumes from the last resourceVersion whenever the watch
// ends.
//
// Run drives it; the other methods are safe for concurrent use with Run and
// with each other.
type Reflector struct {
	lw    ListerWatcher
	store Store
	opts  Options   // defaulted; read-only after New
	check typeCheck // read-only after New

	running atomic.Bool // true while Run is executing

	alarm     chan struct{} // capacity 1: a timer fired (see "The reflector's alarm")
	resyncDue atomic.Bool   // the resync timer fired and was not served yet

	// m is the state machine. Only the goroutine executing Run touches it:
	// no lock, and no reader elsewhere.
	m machine

	// pub is the window other goroutines read through (it has its own lock).
	pub published
}

// machine is everything the state machine steers by. It is owned by the
// goroutine running Run.
type machine struct {
	state State
	after State         // BackingOff: the state the wait leads to
	delay time.Duration // BackingOff: how long to wait
	// heading is the state the machine was in, or waiting to enter, when
	// it last took a step: where a later Run picks up (see startState).
	heading State

	// watch is a stream opened by WatchList and handed, still open, to
	// Watching: after the initial-events-end bookmark the same watch
	// carries on.
	watch watch.Interface

	lastSyncRV string // the resourceVersion the store has reached
	// rvUnusable: a list at lastSyncRV was refused with 410 or "too large";
	// the next list is a consistent read.
	rvUnusable bool
	// synced: the store has received at least one complete snapshot.
	synced bool
	// paginatedBefore: the first list, at "0", came back in pages, so the
	// server has no watch cache for the resource (see pageLimit).
	paginatedBefore bool
	// watchListRefused: in WatchListAuto mode, the server showed it does
	// not support WatchList (see refusesWatchList).
	watchListRefused bool

	backoff backoffState
	resync  Timer // nil when resync is off or Run is not executing
}

// The reflector's alarm.
//
// The loops that wait for the server must also wake for the resync tick
// and the watchdog. Putting each timer's channel in their select would cost
// on every wait: a select registers a timer channel with the runtime's timer
// heap each time it blocks on it, and a busy watch blocks once per event.
// Instead the timers are AfterFunc timers: when one fires it sets its flag
// (resyncDue, or the watchdog's own) and rings the alarm, a channel of
// capacity 1 that the loops select on. The loop that wakes on the alarm
// looks at the flags (serveDue).

// New returns a Reflector that will fill store from lw. Nothing happens
// until Run. The zero Options are client-go's defaults.
func New(lw ListerWatcher, store Store, opts Options) *Reflector {
	opts = opts.withDefaults()
	r := &Reflector{lw: lw, store: store, opts: opts, check: newTypeCheck(opts.ExpectedType), alarm: make(chan struct{}, 1)}
	r.m.backoff = backoffState{cfg: opts.Backoff}
	return r
}

// Run lists and watches until ctx is done, then returns nil. It starts no
// goroutine: the whole machine runs on the caller's, so when Run returns
// nothing it started is left running (the ListerWatcher must return from
// List and Watch, and close its watches, when their context is done).
//
// Run may be called again after it returned: it resumes with a watch from
// the last resourceVersion, or relists when the last Run was about to, or
// when that version is "" or "0", which a watch cannot resume from. It
// returns ErrAlreadyRunning if called while running, and ErrNotConfigured
// if New was given a nil ListerWatcher or Store.
func (r *Reflector) Run(ctx context.Context) error {
	if r.lw == nil || r.store == nil {
		return ErrNotConfigured
	}
	if !r.running.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	defer r.running.Store(false)
	r.startResync()
	defer r.stopResync()
	defer r.dropWatch()

	r.enter(r.startState())
	for r.m.state != StateStopped {
		r.m.heading = r.pending()
		if ctx.Err() != nil {
			break
		}
		rc, cause := r.step(ctx)
		r.apply(rc, cause)
	}
	r.enter(StateStopped)
	return nil
}

// pending is the state the machine is in, or for a backoff, the state the
// wait leads to.
func (r *Reflector) pending() State {
	if r.m.state == StateBackingOff {
		return r.m.after
	}
	return r.m.state
}

// startState is where Run begins: listing on the first run; on a later one,
// relisting if the last Run stopped on its way to a relist (the store may
// need the repair, or the resourceVersion has expired), and otherwise
// resuming the watch, unless the last resourceVersion is no position to
// resume from (see resumable).
func (r *Reflector) startState() State {
	switch {
	case !r.m.synced:
		return StateListing
	case r.m.heading == StateRelisting:
		return StateRelisting
	}
	return resumable(reaction{next: StateWatching}, r.m.lastSyncRV).next
}

// step executes the current state's step: one small function per state.
// cause is the error behind the reaction, if any (for Retry-After).
func (r *Reflector) step(ctx context.Context) (reaction, error) {
	switch r.m.state {
	case StateListing, StateRelisting:
		return r.stepList(ctx)
	case StateWatching:
		return r.stepWatch(ctx)
	case StateBackingOff:
		return r.stepBackoff(ctx)
	default:
		return stop, nil
	}
}

// apply performs a reaction: records an unusable resourceVersion, and
// either enters the next state or arms a backoff towards it.
func (r *Reflector) apply(rc reaction, cause error) {
	if rc.consistent {
		r.m.rvUnusable = true
	}
	if !rc.backoff || rc.next == StateStopped {
		r.enter(rc.next)
		return
	}
	floor := time.Duration(retryAfter(cause)) * time.Second
	d := r.m.backoff.next(r.opts.Clock.Now(), r.opts.Rand.Float64(), floor)
	r.m.after, r.m.delay = rc.next, d
	r.pub.update(func(p *published) { p.backoffs++; p.lastBackoff = d })
	r.enter(StateBackingOff)
}

// enter moves the machine to s.
func (r *Reflector) enter(s State) {
	r.m.state = s
	r.pub.enter(s, r.opts.Clock.Now())
}

// stepBackoff waits the delay chosen by apply, still serving resyncs.
func (r *Reflector) stepBackoff(ctx context.Context) (reaction, error) {
	t := r.opts.Clock.NewTimer(r.m.delay)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return stop, nil
		case <-t.C():
			return reaction{next: r.m.after}, nil
		case <-r.alarm:
			r.serveResync()
		}
	}
}

// report wraps err in an *Error of the given kind (classifying it when kind
// is negative), counts it, hands it to OnError, and returns it.
func (r *Reflector) report(op string, kind Kind, err error) *Error {
	if kind < 0 {
		kind = KindOf(err)
	}
	e := &Error{Reflector: r.opts.Name, Op: op, Kind: kind, Err: err}
	r.pub.update(func(p *published) { p.errors[kind]++ })
	if r.opts.OnError != nil {
		r.opts.OnError(e)
	}
	return e
}

// classifyKind asks report to classify the error itself.
const classifyKind Kind = -1

// setSynced records a complete snapshot at rv.
func (r *Reflector) setSynced(rv string, viaWatchList bool) {
	relist := r.m.synced
	r.m.synced, r.m.rvUnusable, r.m.lastSyncRV = true, false, rv
	r.pub.update(func(p *published) {
		p.lastRV = rv
		if viaWatchList {
			p.watchListSyncs++
		} else {
			p.lists++
		}
		if relist {
			p.relists++
		}
	})
}

// dropWatch stops a watch handed over by WatchList and never consumed
// (Run ended in between).
func (r *Reflector) dropWatch() {
	if r.m.watch != nil {
		r.m.watch.Stop()
		r.m.watch = nil
	}
}

// startResync arms the resync timer, if resync is on.
func (r *Reflector) startResync() {
	if r.opts.ResyncPeriod > 0 {
		r.armResync()
	}
}

// armResync arms the resync timer for the next period, stopping the one it
// replaces. There is one to stop when the tick being served was a late one:
// its timer fired as an earlier Run returned, but its function set the flag
// only after that Run's stopResync, and this Run has armed its own since.
func (r *Reflector) armResync() {
	if r.m.resync != nil {
		r.m.resync.Stop()
	}
	r.m.resync = r.opts.Clock.AfterFunc(r.opts.ResyncPeriod, func() {
		r.resyncDue.Store(true)
		r.ring()
	})
}

func (r *Reflector) stopResync() {
	if r.m.resync != nil {
		r.m.resync.Stop()
		r.m.resync = nil
	}
	r.resyncDue.Store(false)
}

// ring wakes whichever loop is waiting on the alarm, or the next one to.
func (r *Reflector) ring() {
	select {
	case r.alarm <- struct{}{}:
	default: // already ringing
	}
}

// serveResync serves a resync tick that came due, if any. A tick waits
// while the store holds no snapshot yet (resyncing an empty store would
// only confuse its consumers): it stays due, and the first loop to look
// after the snapshot serves it.
func (r *Reflector) serveResync() {
	if r.m.synced && r.resyncDue.Load() && r.resyncDue.Swap(false) {
		r.resync()
	}
}

// resync handles a resync tick: asks ShouldResync, calls Store.Resync, and
// re-arms the timer for the next period. Ticks are served while watching
// and while backing off; one that comes due during a list waits for the
// list to end (the store is being replaced anyway). Running it on the
// machine's own goroutine, not a second one as client-go does, keeps every
// Store call on one goroutine.
func (r *Reflector) resync() {
	if r.opts.ShouldResync == nil || r.opts.ShouldResync() {
		if err := r.store.Resync(); err != nil {
			r.report(opStore, KindStore, fmt.Errorf("resync: %w", err))
		}
		r.pub.update(func(p *published) { p.resyncs++ })
	}
	r.armResync()
}

// LastSyncResourceVersion returns the resourceVersion the store has
// reached: the last list's, bookmark's or event's. "" before the first
// snapshot.
func (r *Reflector) LastSyncResourceVersion() string {
	r.pub.mu.Lock()
	defer r.pub.mu.Unlock()
	return r.pub.lastRV
}

// State returns the current state.
func (r *Reflector) State() State {
	r.pub.mu.Lock()
	defer r.pub.mu.Unlock()
	return r.pub.state
}

// Stats returns a snapshot of the reflector's counters.
func (r *Reflector) Stats() Stats {
	s := r.pub.snapshot(r.opts.Clock.Now())
	if bc, ok := r.lw.(BytesCounter); ok {
		s.BytesDecoded = bc.BytesDecoded()
	}
	return s
}
