package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed31a95821/informer/metrics"
)

// ErrRenewOverdue is Check's answer when this candidate still believes it
// leads although its last successful renew is older than RenewDeadline
// plus one RetryPeriod: the loop that should have stepped it down is stuck.
var ErrRenewOverdue = errors.New("leaderelection: leader has not renewed in time")

// Callbacks are told about terms and leaders. Every callback runs on the
// Elector's loop except OnStartedLeading, which runs on a goroutine of its
// own; they must not block.
type Callbacks struct {
	// OnStartedLeading starts a term: run the leader's work under ctx,
	// which is cancelled when the term ends (a renew that failed until the
	// renew deadline, a shutdown). The next term starts only after it
	// returns, so return promptly once ctx is done, and only when the work
	// begun under ctx has stopped.
	OnStartedLeading func(ctx context.Context)
	// OnStoppedLeading is called after a term's OnStartedLeading returned.
	OnStoppedLeading func()
	// OnNewLeader is called when the holder seen in the lease changes to
	// someone (this candidate included).
	OnNewLeader func(identity string)
}

// Options configure an Elector.
type Options struct {
	Config
	// Lock is the lease: a *LeaseLock on a real server, a *MemoryStore in
	// tests.
	Lock LeaseStore
	Callbacks
	// ReleaseOnCancel hands the lease back when Run's context is
	// cancelled, after the term's work has stopped, so that a successor
	// takes over at its next retry instead of after LeaseDuration.
	ReleaseOnCancel bool
	// Want, when set, is asked each round whether to hold the lease at
	// all: a follower that does not want it only reads; a leader that no
	// longer wants it ends its term, waits for the term's work and releases
	// the lease (a handover). Package sharding holds its shards this way.
	// Nil means always.
	Want func() bool
	// Logger receives a line per failed request, with the lease's name;
	// nil means slog.Default().
	Logger *slog.Logger
	// Metrics, when set, reports leader_election_master_status (1 while
	// this Elector leads, else 0; the label name is the lease's
	// namespace/name) for as long as Run runs. It is read when scraped.
	Metrics *metrics.Registry
}

// collect reports whether this Elector leads (Options.Metrics).
func (e *Elector) collect(emit func(*metrics.Desc, metrics.Sample)) {
	emit(metrics.LeaderStatus, metrics.Sample{LabelValues: []string{e.opts.Lock.Describe()}, Value: oneIf(e.IsLeader())})
}

// oneIf is a gauge's value for a condition.
func oneIf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Elector runs a Machine against a LeaseStore on one goroutine (Run) and
// turns its terms into callbacks. Unlike client-go's, an Elector that
// loses its lease keeps campaigning, so a warm standby (Gate) can lead
// again without a restart. Its methods are safe for concurrent use.
type Elector struct {
	opts Options

	mu sync.Mutex // guards m
	m  *Machine
	// poke wakes Run for a round now (Poke); buffered, one pending poke.
	poke chan struct{}
}

// New checks opts and returns an Elector that has not started.
func New(opts Options) (*Elector, error) {
	if err := opts.Config.Validate(); err != nil {
		return nil, err
	}
	if opts.Lock == nil {
		return nil, fmt.Errorf("%w: no Lock", ErrInvalidConfig)
	}
	opts.Config = opts.Config.WithDefaults()
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Elector{opts: opts, m: NewMachine(opts.Config), poke: make(chan struct{}, 1)}, nil
}

// Poke asks for a round now instead of at the next retry: Want changed.
// It never blocks.
func (e *Elector) Poke() {
	select {
	case e.poke <- struct{}{}:
	default:
	}
}

// IsLeader tells whether this candidate holds the lease now.
func (e *Elector) IsLeader() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.m.Leading(time.Now())
}

// Leader returns the holder as last seen, "" for nobody.
func (e *Elector) Leader() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.m.Leader()
}

// Holder returns the live holder of the lease as this candidate sees it:
// itself while it leads, another while that one's lease has not expired
// on our clock, else "".
func (e *Elector) Holder() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := time.Now()
	if e.m.Leading(now) {
		return e.opts.Identity
	}
	if exp := e.m.Expiry(); !exp.IsZero() && now.Before(exp) {
		return e.m.Leader()
	}
	return ""
}

// holding tells whether the last record seen names this candidate.
func (e *Elector) holding() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.m.Leader() == e.opts.Identity
}

// Check is a health check: ErrRenewOverdue when this candidate believes
// it leads but its term should have ended more than a RetryPeriod ago.
func (e *Elector) Check() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m.Overdue(time.Now(), e.opts.RetryPeriod) {
		return fmt.Errorf("%w: lease %s", ErrRenewOverdue, e.opts.Lock.Describe())
	}
	return nil
}

// term is one period of leadership: the context OnStartedLeading runs
// under (wrapped in a termContext), the watchdog that cancels it at the
// authority's end whatever the loop is doing, and done, closed when
// OnStartedLeading returned.
type term struct {
	ctx      context.Context
	cancel   context.CancelFunc
	watchdog *time.Timer
	// end is the term's own authority end, moved forward only by sync when
	// a renew extends it while the term is unbroken. A term whose end has
	// passed is over even if a later renew made the machine lead again:
	// between the lapse and that renew another candidate may have led.
	end  atomic.Pointer[time.Time]
	done chan struct{}
}

// extend moves the term's authority end (sync, with the watchdog).
func (t *term) extend(end time.Time) {
	t.end.Store(&end)
	t.watchdog.Reset(time.Until(end))
}

// lapsed tells whether the term's authority end has passed at now.
func (t *term) lapsed(now time.Time) bool { return !now.Before(*t.end.Load()) }

// Run campaigns until ctx is cancelled, then ends the term (if any),
// waits for its work, releases the lease when ReleaseOnCancel is set and
// returns. No goroutine it started outlives it.
func (e *Elector) Run(ctx context.Context) {
	defer e.opts.Metrics.Register(metrics.CollectorFunc(e.collect))()
	var t *term
	reported := ""
	wait := time.NewTimer(0)
	defer wait.Stop()
	for {
		select {
		case <-ctx.Done():
			e.endTerm(&t)
			if e.opts.ReleaseOnCancel {
				e.release()
			}
			return
		case <-wait.C:
		case <-e.poke:
			wait.Stop()
		}
		want := e.opts.Want == nil || e.opts.Want()
		e.round(ctx, want)
		e.sync(ctx, &t, &reported)
		if !want && e.holding() {
			e.endTerm(&t) // the work of the term stops first,
			e.release()   // then the lease goes, free for the next holder at its next retry
		}
		wait.Reset(e.untilNext())
	}
}

// round is one read and, if the machine (and want) asks for it, one write.
func (e *Elector) round(ctx context.Context, want bool) {
	rctx, cancel := e.requestContext(ctx)
	defer cancel()
	rec, err := e.opts.Lock.Get(rctx)
	now := time.Now()
	e.mu.Lock()
	e.m.Tick(now)
	if err != nil {
		e.mu.Unlock()
		if ctx.Err() == nil {
			e.opts.Logger.Warn("leaderelection: reading the lease failed", "lease", e.opts.Lock.Describe(), "error", err)
		}
		return
	}
	e.m.Observe(now, rec)
	w, ok := e.m.Next(now)
	e.mu.Unlock()
	if !ok || !want {
		return
	}
	sent := time.Now()
	var out *Record
	if w.Create {
		out, err = e.opts.Lock.Create(rctx, w.Record)
	} else {
		out, err = e.opts.Lock.Update(rctx, w.Record)
	}
	now = time.Now()
	e.mu.Lock()
	e.m.Wrote(sent, now, out, err)
	e.m.Tick(now)
	e.mu.Unlock()
	if err != nil && ctx.Err() == nil {
		e.opts.Logger.Warn("leaderelection: writing the lease failed", "lease", e.opts.Lock.Describe(), "error", err)
	}
}

// requestContext bounds a request: by the authority's end while leading
// (a leader must be back in time to step down), else by RenewDeadline.
func (e *Elector) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	e.mu.Lock()
	end := e.m.AuthorityEnd()
	e.mu.Unlock()
	if end.IsZero() {
		return context.WithTimeout(ctx, e.opts.RenewDeadline)
	}
	return context.WithDeadline(ctx, end)
}

// untilNext is the wait before the next round: RetryPeriod for a leader
// (never past its authority's end); for a follower a random time between
// half a RetryPeriod and one, and no later than the moment the watched
// lease expires on our clock, so that a dead leader is replaced within
// LeaseDuration plus one RetryPeriod of its last renew.
func (e *Elector) untilNext() time.Duration {
	e.mu.Lock()
	end, expiry := e.m.AuthorityEnd(), e.m.Expiry()
	e.mu.Unlock()
	if !end.IsZero() {
		return min(e.opts.RetryPeriod, max(time.Until(end), 0))
	}
	wait := e.opts.RetryPeriod/2 + time.Duration(rand.Int64N(int64(e.opts.RetryPeriod/2)+1))
	if d := time.Until(expiry); !expiry.IsZero() && d > 0 {
		wait = min(wait, d) // an expiry already past does not shorten the wait: no busy loop on a failing server
	}
	return wait
}

// sync starts or ends the term to match the machine, and reports a new
// leader.
func (e *Elector) sync(ctx context.Context, t **term, reported *string) {
	now := time.Now()
	e.mu.Lock()
	if *t != nil && (!(*t).watchdog.Stop() || (*t).ctx.Err() != nil || (*t).lapsed(now)) {
		// The watchdog fired, a worker saw the lapse (termContext), or the
		// term's end passed before this sync (a pause, with the renew
		// that followed it run before the overdue watchdog): the term is
		// over whatever the machine thought; a new one starts next round.
		e.m.StepDown()
	}
	leading, end, leader := e.m.Leading(now), e.m.AuthorityEnd(), e.m.Leader()
	e.mu.Unlock()
	if leader != *reported && leader != "" && e.opts.OnNewLeader != nil {
		e.opts.OnNewLeader(leader)
	}
	*reported = leader
	switch {
	case leading && *t == nil:
		*t = e.startTerm(ctx, end)
	case leading:
		(*t).extend(end)
	case *t != nil:
		e.endTerm(t)
	}
}

func (e *Elector) startTerm(ctx context.Context, end time.Time) *term {
	tctx, cancel := context.WithCancel(ctx)
	t := &term{ctx: tctx, cancel: cancel, watchdog: time.AfterFunc(time.Until(end), cancel), done: make(chan struct{})}
	t.end.Store(&end)
	go func() {
		defer close(t.done)
		if e.opts.OnStartedLeading != nil {
			e.opts.OnStartedLeading(&termContext{Context: tctx, cancel: cancel, lapsed: t.lapsed})
		}
	}()
	return t
}

// termContext is the context a term runs under. Its Err asks the clock,
// not only the watchdog: a process resumed after a pause longer than its
// authority (SIGSTOP, a stalled VM) has an overdue watchdog that the
// runtime runs at some point after the resume, and a worker scheduled
// first would find the context still live and start work for a term
// that is over. Err closes that window: once the term's own authority
// end (term.end) has passed on the monotonic clock it cancels the term
// itself, then reports it, so Err and Done agree as the context contract
// requires. Contexts derived from it see the end through Done only, when
// the watchdog or an Err has cancelled it: check the term's own Err
// before each write (package doc, on fencing).
type termContext struct {
	context.Context
	cancel context.CancelFunc
	lapsed func(now time.Time) bool
}

// Err is the term's error: non-nil once the term was cancelled or its
// authority lapsed, whichever is seen first.
func (c *termContext) Err() error {
	if err := c.Context.Err(); err != nil {
		return err
	}
	if c.lapsed(time.Now()) {
		c.cancel()
		return c.Context.Err()
	}
	return nil
}

// endTerm cancels the term's context and waits for its work to stop.
func (e *Elector) endTerm(t **term) {
	if *t == nil {
		return
	}
	e.mu.Lock()
	e.m.StepDown()
	e.mu.Unlock()
	(*t).watchdog.Stop()
	(*t).cancel()
	<-(*t).done
	*t = nil
	if e.opts.OnStoppedLeading != nil {
		e.opts.OnStoppedLeading()
	}
}

// release hands the lease back, bounded by RenewDeadline. Run's context
// is already cancelled, so the request gets a fresh one.
func (e *Elector) release() {
	e.mu.Lock()
	w, ok := e.m.Release(time.Now())
	e.mu.Unlock()
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), e.opts.RenewDeadline)
	defer cancel()
	sent := time.Now()
	out, err := e.opts.Lock.Update(ctx, w.Record)
	e.mu.Lock()
	e.m.Wrote(sent, time.Now(), out, err)
	e.mu.Unlock()
	if err != nil {
		e.opts.Logger.Warn("leaderelection: releasing the lease failed", "lease", e.opts.Lock.Describe(), "error", err)
	}
}
