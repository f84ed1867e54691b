package reflector

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
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
	scope scope     // read-only after New: what the ListerWatcher asked for

	running atomic.Bool // true while Run is executing

	alarm     chan struct{} // capacity 1: a timer fired (see "The reflector's alarm")
	resyncDue atomic.Bool   // the resync timer fired and was not served yet

	// m is the state machine (machine.go), and resync the resync timer
	// (nil when resync is off or Run is not executing). Only the goroutine
	// executing Run touches them: no lock, and no reader elsewhere.
	m      machine
	resync *time.Timer

	// pub is the window other goroutines read through (it has its own lock).
	pub published
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
	r := &Reflector{
		lw: lw, store: store, opts: opts, alarm: make(chan struct{}, 1),
		check: newTypeCheck(opts.ExpectedType), scope: scopeOf(lw),
	}
	r.m = machine{
		backoff:       backoffState{cfg: opts.Backoff},
		draw:          opts.Rand.Float64,
		autoWatchList: opts.WatchList == WatchListAuto,
	}
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

	// The outer loop: perform the I/O the state asks for, hand what came
	// of it to the machine, enter the state it returns.
	s := r.m.start()
	r.enter(s)
	for {
		var in input
		if ctx.Err() != nil {
			s, in = dropStream(s), ctxDone{}
		} else {
			s, in = r.perform(ctx, s)
		}
		s = r.m.step(s, in)
		r.enter(s)
		if _, ok := s.(stopped); ok {
			r.m.state = s
			return nil
		}
	}
}

// perform does the I/O of state s and returns s as the I/O left it (a
// watch's resourceVersion moves with its events, and its stream is
// consumed) with what came of it.
func (r *Reflector) perform(ctx context.Context, s state) (state, input) {
	var in input
	switch s := s.(type) {
	case listing:
		in = r.list(ctx, s)
	case watching:
		return r.watch(ctx, s)
	case backingOff:
		in = r.wait(ctx, s)
	default:
		in = ctxDone{}
	}
	return s, in
}

// dropStream stops the open stream a state holds (a watch WatchList handed
// over, never consumed because Run ended in between), and returns the
// state without it.
func dropStream(s state) state {
	if w, ok := s.(watching); ok && w.stream != nil {
		w.stream.Stop()
		w.stream = nil
		return w
	}
	return s
}

// enter publishes s as the current state.
func (r *Reflector) enter(s state) {
	if b, ok := s.(backingOff); ok {
		r.pub.update(func(p *published) { p.backoffs++; p.lastBackoff = b.delay })
	}
	r.pub.enter(s.public(), time.Now())
}

// wait is the I/O of a backoff: wait the delay, still serving resyncs.
// A resync that fails ends the wait early; what is left of it (a server's
// Retry-After, say) goes with the failure, so the wait that follows is no
// shorter.
func (r *Reflector) wait(ctx context.Context, b backingOff) input {
	end := time.Now().Add(b.delay)
	t := time.NewTimer(b.delay)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctxDone{}
		case <-t.C:
			return waitOver{}
		case <-r.alarm:
			// A tick due at the wait's own end (both timers fired, and
			// select picks either at random) is left to the relist the
			// wait leads to, which replaces what it would re-deliver: the
			// same outcome whichever timer the runtime ran first.
			if !time.Now().Before(end) {
				return waitOver{}
			}
			if rf := r.serveResync(); rf != nil {
				f := faultFrom(rf.e)
				f.waitLeft = time.Until(end)
				return storeFailed{f}
			}
		}
	}
}

// fail reports a failure of op and returns it as the machine's inputs
// carry it.
func (r *Reflector) fail(op string, kind Kind, err error) fault {
	return faultFrom(r.report(op, kind, err))
}

// faultFrom is a reported failure as the machine's inputs carry it.
func faultFrom(e *Error) fault {
	return fault{kind: e.Kind, err: e, now: time.Now()}
}

// report wraps err in an *Error of the given kind (classifying it when kind
// is negative), counts it, hands it to OnError, and returns it.
func (r *Reflector) report(op string, kind Kind, err error) *Error {
	if kind < 0 {
		kind = KindOf(err)
	}
	e := &Error{Reflector: r.opts.Name, Op: op, Kind: kind, Err: err}
	r.pub.update(func(p *published) { p.errors[kind]++ })
	if kind == KindNotServed && r.m.notServed {
		return e // told once already: a probe that finds nothing is no news
	}
	if r.opts.OnError != nil {
		r.opts.OnError(e)
	}
	return e
}

// classifyKind asks report to classify the error itself.
const classifyKind Kind = -1

// publishSnapshot publishes a complete snapshot at rv.
func (r *Reflector) publishSnapshot(rv string, viaWatchList bool) {
	relist := r.m.synced
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
	if r.resync != nil {
		r.resync.Stop()
	}
	r.resync = time.AfterFunc(r.opts.ResyncPeriod, r.resyncFired)
}

// resyncFired is the resync timer's function: it runs on a goroutine of
// its own when the timer fires, possibly after the Run that armed it has
// returned (a late tick, which the next Run serves).
func (r *Reflector) resyncFired() {
	r.resyncDue.Store(true)
	r.ring()
}

func (r *Reflector) stopResync() {
	if r.resync != nil {
		r.resync.Stop()
		r.resync = nil
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
// after the snapshot serves it. It returns the store's failure, already
// reported, which ends the watch or the wait it was served in.
func (r *Reflector) serveResync() *resyncFailed {
	if r.m.synced && r.resyncDue.Load() && r.resyncDue.Swap(false) {
		return r.resyncNow()
	}
	return nil
}

// resyncNow handles a resync tick: asks ShouldResync, calls Store.Resync, and
// re-arms the timer for the next period. Ticks are served while watching
// and while backing off; one that comes due during a list waits for the
// list to end (the store is being replaced anyway). Running it on the
// machine's own goroutine, not a second one as client-go does, keeps every
// Store call on one goroutine.
//
// A store that fails a resync is reported once, and the failure ends the
// watch (or the wait) it was served in: the transition table then relists
// after a backoff, as client-go does. A store that cannot re-deliver what
// it holds may not hold what it should either, and only a snapshot
// repairs that; the growing backoff keeps a store that always fails from
// costing more than one list per Backoff.Max.
func (r *Reflector) resyncNow() *resyncFailed {
	var failure *resyncFailed
	if r.opts.ShouldResync == nil || r.opts.ShouldResync() {
		if err := r.store.Resync(); err != nil {
			failure = &resyncFailed{e: r.report(opStore, KindStore, fmt.Errorf("resync: %w", err))}
		}
		r.pub.update(func(p *published) { p.resyncs++ })
	}
	r.armResync()
	return failure
}

// resyncFailed is a failed resync, already reported, on its way out of the
// watch it ends (see resyncNow).
type resyncFailed struct{ e *Error }

func (f *resyncFailed) Error() string { return f.e.Error() }
func (f *resyncFailed) Unwrap() error { return f.e }

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
	s := r.pub.snapshot(time.Now())
	if bc, ok := r.lw.(bytesCounter); ok {
		s.BytesDecoded = bc.BytesDecoded()
	}
	return s
}
