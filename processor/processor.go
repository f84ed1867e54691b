package processor

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// runState is the processor's lifecycle: it moves forward only,
// notStarted -> running -> stopped.
type runState int

const (
	notStarted runState = iota // handlers can be added; their goroutines wait for Run
	running                    // Run is active; new handlers start at once
	stopped                    // Run's context is done; no new handlers
)

// Processor fans notifications out to handlers, each on its own goroutine and
// at its own pace. See the package documentation for the model.
//
// A Processor is safe for concurrent use. It is meant to be fed by one
// goroutine (the informer's), which calls Distribute, MarkSynced and
// ShouldResync in stream order; AddHandler, Remove and Stats may be called
// from anywhere. Concurrent Distribute calls are safe but serialise: the
// journal has one end.
type Processor struct {
	opts  Options
	watch stopwatch // times Handle calls

	// j is the journal every handler reads (see journal). Besides
	// notifications it carries the sync marker MarkSynced appends: when a
	// handler's goroutine reaches it, everything before it has been
	// handled. Carrying this in the stream itself, instead of counting
	// notifications, is what keeps HasSynced exact without polling.
	j *journal

	// sleepers counts the handler goroutines that are parked, or about to
	// park, waiting for the journal to grow: while it is 0, which is most of
	// the time under load, Distribute wakes nobody and looks at no
	// registration.
	sleepers atomic.Int32

	// due is the set of handlers due in the current resync round, replaced
	// by each ShouldResync; resync notifications carry it.
	due atomic.Pointer[recipients]

	// marker is what the sync marker's entry points to.
	marker *recipients

	// mu guards state, runCtx, synced, seq, writes to regs, and each
	// Registration's nextResync, started and removed fields. It is never held
	// while a handler runs, and Distribute does not take it.
	mu     sync.Mutex
	state  runState
	runCtx context.Context // Run's context, for goroutines of late handlers
	synced bool            // MarkSynced was called
	seq    int             // registrations so far, for generated names

	// regs is the current list of registrations. It is copied on every
	// change (under mu) and replaced atomically, so that Distribute can read
	// it without a lock: registrations change rarely, notifications often.
	regs atomic.Pointer[[]*Registration]

	// wg counts the running handler goroutines. Add is only called under mu
	// while state is running, so it never races with Run's final Wait.
	wg sync.WaitGroup

	// coalescing lists the handlers that fell more than their limit behind:
	// every notification is pushed to their backlogs as well as appended to
	// the journal (see overflow.go). It is guarded by the journal's wmu, so
	// that the journal and the backlogs receive the stream in one order.
	coalescing []*Registration
}

// New returns a Processor with no handlers. Nothing runs until Run.
func New(opts Options) *Processor {
	p := &Processor{
		opts:   opts.withDefaults(),
		watch:  newStopwatch(),
		j:      newJournal(),
		marker: &recipients{marker: true},
	}
	p.regs.Store(&[]*Registration{})
	return p
}

// Run starts a goroutine per registered handler, then blocks until ctx is
// done and every handler goroutine has exited. A handler busy in Handle is
// waited for; notifications not yet handled when ctx is done are dropped,
// because nobody is left to want them. Calling Run a second time returns at
// once without doing anything.
func (p *Processor) Run(ctx context.Context) {
	if !p.start(ctx) {
		return
	}
	<-ctx.Done()
	p.mu.Lock()
	p.state = stopped
	p.mu.Unlock()
	p.wg.Wait()
}

// start moves notStarted to running and starts the goroutines of the handlers
// added so far. It reports false if Run was already called.
func (p *Processor) start(ctx context.Context) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state != notStarted {
		return false
	}
	p.state = running
	p.runCtx = ctx
	for _, r := range *p.regs.Load() {
		p.startLocked(r)
	}
	return true
}

// startLocked starts r's goroutine. p.mu must be held and state be running.
func (p *Processor) startLocked(r *Registration) {
	r.started = true
	ctx := p.runCtx // read under p.mu, handed to the goroutine by value
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		r.run(ctx)
	}()
}

// AddHandler registers h. Before Run, its goroutine starts when Run starts;
// while running, it starts at once.
//
// The handler first receives initial, on its own goroutine, as Add
// notifications with InInitialList set, then every notification distributed
// after AddHandler returned. The informer passes a snapshot of its cache here
// when it adds a handler late, taken under its own lock so that the snapshot
// and the stream join without a gap or a duplicate (before Run the snapshot
// is empty, and the cache fills through the stream).
// The processor keeps initial until it is replayed, so the caller must not
// modify it.
//
// AddHandler returns ErrNilHandler, ErrNegativeResyncPeriod or
// ErrNegativeBacklogLimit (wrapped) or, once the processor has stopped,
// ErrStopped.
func (p *Processor) AddHandler(h Handler, opts HandlerOptions, initial InitialObjects) (*Registration, error) {
	if f, ok := h.(HandlerFunc); h == nil || ok && f == nil {
		return nil, ErrNilHandler
	}
	period, err := normalizedResync(opts.ResyncPeriod)
	if err != nil {
		return nil, err
	}
	limit, err := opts.backlogLimit()
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state == stopped || (p.state == running && p.runCtx.Err() != nil) {
		return nil, ErrStopped
	}
	p.seq++
	name := opts.Name
	if name == "" {
		name = "handler-" + strconv.Itoa(p.seq)
	}
	r := newRegistration(p, h, name, period, limit, initial)
	if period > 0 {
		r.nextResync = time.Now().Add(period)
	}
	// The upstream cache may already be synced (the marker is behind the
	// join point): this handler is synced as soon as it has replayed
	// initial, which comes before the journal.
	r.syncAfterReplay = p.synced
	r.cur, r.plainAtJoin = p.j.join()
	r.atSeq.Store(r.cur.page.seq.Load())
	regs := *p.regs.Load()
	p.regs.Store(new(append(slices.Clip(regs), r)))
	if p.state == running {
		p.startLocked(r)
	}
	return r, nil
}

// remove implements Registration.Remove.
func (p *Processor) remove(r *Registration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r.removed {
		return
	}
	r.removed = true
	regs := *p.regs.Load()
	if i := slices.Index(regs, r); i >= 0 {
		p.regs.Store(new(slices.Delete(slices.Clone(regs), i, i+1)))
	}
	p.closeBacklog(r) // the backlog is dropped
	if r.started {
		// stop first: once the goroutine sees it, it reads no more entries,
		// so detaching its cursor cannot pull a page from under it.
		close(r.stop) // the goroutine closes done when it exits
		p.j.detach(&r.cur)
	} else {
		p.j.leave(&r.cur) // no goroutine ever ran, and Run will not start one
		close(r.done)
	}
}

// Len returns the number of registered handlers. The cost of waking the
// handlers that keep up, and so wait for every notification, grows with it,
// which is what the informer uses it for.
func (p *Processor) Len() int { return len(*p.regs.Load()) }

// Distribute hands n to every handler or, when isSync is true, only to the
// handlers that the latest ShouldResync found due. It appends n to the
// journal once, whatever the number of handlers, wakes the handler
// goroutines that were waiting for more (usually none, under load) and
// returns: it never waits for a handler.
//
// The informer sets isSync for a periodic resync's Sync deltas and for an
// object that a relist found unchanged: both mean "you have seen this
// already", which only handlers that asked for a resync want to hear again.
func (p *Processor) Distribute(n Notification, isSync bool) {
	if len(*p.regs.Load()) == 0 {
		return
	}
	e := entry{n: n}
	if isSync {
		due := p.due.Load()
		if due == nil || len(due.due) == 0 {
			return
		}
		for r := range due.due {
			r.extra.Add(1) // before the entry is published: see Registration.extra
		}
		e.to = due
	}
	p.publish(e)
}

// publish appends e to the journal, and to the backlogs of the handlers
// that are too far behind to read it there, and wakes the handlers waiting
// for it.
func (p *Processor) publish(e entry) {
	j := p.j
	j.wmu.Lock()
	if j.tailFull() {
		p.boundBacklogs()
	}
	j.appendLocked(e)
	for _, r := range p.coalescing {
		r.pushBacklog(&e)
	}
	j.wmu.Unlock()
	p.wakeSleepers()
}

// wakeSleepers wakes the handler goroutines parked waiting for the journal
// to grow. See Registration.park for the handshake.
func (p *Processor) wakeSleepers() {
	if p.sleepers.Load() == 0 {
		return
	}
	for _, r := range *p.regs.Load() {
		if r.parked.Load() && r.unpark() {
			select {
			case r.wake <- struct{}{}:
			default: // cannot happen: one wake per park, taken by that park
			}
		}
	}
}

// MarkSynced tells the processor that the upstream cache has finished its
// initial list: every notification distributed so far belongs to the initial
// state. Each handler becomes synced when it has handled all of them. Calls
// after the first do nothing.
func (p *Processor) MarkSynced() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.synced {
		return
	}
	p.synced = true
	if len(*p.regs.Load()) > 0 {
		p.publish(entry{to: p.marker})
	}
}
