package sharding

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed31a95821/informer/leaderelection"
	"github.com/seed31a95821/informer/metrics"
	"github.com/seed31a95821/informer/workqueue"
)

// Options configure a Coordinator.
type Options struct {
	// Identity names this replica; unique in the fleet.
	Identity string
	// Shards is K, the number of shard leases; the keys are split over
	// them by ShardOf. Every replica must use the same K.
	Shards int
	// Timing is each lease's (package leaderelection's defaults for zero
	// durations); its Identity is ignored.
	Timing leaderelection.Config
	// Group holds the leases: "<Name>-shard-<i>" and "<Name>-member-<identity>".
	Group LeaseGroup
	// Name prefixes the lease names; "" means "shards".
	Name string
	// Queue is the workqueue the replica's workers take keys from: a key
	// parked because its shard was not held goes back to it when the
	// shard is taken.
	Queue *workqueue.Queue[string]
	// Exists tells whether key still names an object in this replica's
	// cache: a lister's Get that did not answer NotFound. A parked key
	// whose object is gone is let go: the delete queues the key once more,
	// and Enter, finding no object, forgets it, so that the parked keys
	// are at most the cache's and do not grow with every object a
	// long-lived fleet has ever seen. (The owner of the shard reconciles
	// the delete; if it dies first, the delete is missed here as it is by
	// a controller that restarts: cleanup that must happen belongs behind
	// a finalizer.) It is called under the Coordinator's lock, so it must
	// not block nor call the Coordinator. Required.
	Exists func(key string) bool
	// OnHeld, when set, is told when this replica starts (held true) and
	// stops holding a shard. It runs on the shard's goroutine; it must not
	// block.
	OnHeld func(shard int, held bool)
	// Logger receives a line per failed request; nil means slog.Default().
	Logger *slog.Logger
	// Metrics, when set, reports informer_shard_owned for each shard (1
	// while this replica holds it, else 0) for as long as Run runs. It is
	// read when scraped.
	Metrics *metrics.Registry
}

// Coordinator holds this replica's fair share of K shard leases and lets
// its workers process only the keys of the shards it holds. Each shard
// lease is a mutual-exclusion lease exactly like a leader's: one
// leaderelection.Elector per shard, whose Want follows the Plan. Each
// replica also holds a member lease of its own; one List of the group
// tells every replica who is alive, on its own clock, by the same rule a
// follower judges a leader by. Its methods are safe for concurrent use.
type Coordinator struct {
	opts     Options
	electors []*leaderelection.Elector
	member   *leaderelection.Elector
	want     []atomic.Bool // want[i]: the last plan gives shard i to this replica

	mu     sync.Mutex // guards shards and parked
	shards []shardTerm
	parked []map[string]struct{}

	// members judges the member leases; only the planner goroutine uses it.
	members map[string]*leaderelection.Machine
	// giving[i] is when the plans began to give shard i, held here, to
	// another member; zero while they do not. Only the planner goroutine
	// uses it.
	giving []time.Time
}

// shardTerm is this replica's current term on one shard.
type shardTerm struct {
	ctx    context.Context // nil while not held
	inside int             // workers in the term
	left   chan struct{}   // closed when the term ended and the last worker left
}

// New checks opts and returns a Coordinator that has not started.
func New(opts Options) (*Coordinator, error) {
	if opts.Shards <= 0 || opts.Group == nil || opts.Queue == nil || opts.Exists == nil {
		return nil, fmt.Errorf("%w: Shards, Group, Queue and Exists are required", leaderelection.ErrInvalidConfig)
	}
	if opts.Name == "" {
		opts.Name = "shards"
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	timing := opts.Timing
	timing.Identity = opts.Identity
	if err := timing.Validate(); err != nil {
		return nil, err
	}
	opts.Timing = timing.WithDefaults()
	c := &Coordinator{opts: opts, want: make([]atomic.Bool, opts.Shards), shards: make([]shardTerm, opts.Shards),
		parked: make([]map[string]struct{}, opts.Shards), members: map[string]*leaderelection.Machine{},
		giving: make([]time.Time, opts.Shards)}
	var err error
	c.member, err = leaderelection.New(leaderelection.Options{Config: opts.Timing, ReleaseOnCancel: true,
		Lock: opts.Group.Lock(c.memberLease(opts.Identity)), Logger: opts.Logger})
	if err != nil {
		return nil, err
	}
	for i := range opts.Shards {
		c.parked[i] = map[string]struct{}{}
		e, err := leaderelection.New(leaderelection.Options{Config: opts.Timing, ReleaseOnCancel: true,
			Lock: opts.Group.Lock(c.shardLease(i)), Want: c.want[i].Load, Logger: opts.Logger,
			Callbacks: leaderelection.Callbacks{OnStartedLeading: func(ctx context.Context) { c.hold(ctx, i) }}})
		if err != nil {
			return nil, err
		}
		c.electors = append(c.electors, e)
	}
	return c, nil
}

func (c *Coordinator) memberLease(id string) string { return c.opts.Name + "-member-" + id }

func (c *Coordinator) shardLease(i int) string { return fmt.Sprintf("%s-shard-%d", c.opts.Name, i) }

// Run holds this replica's membership and its shards until ctx ends; then
// it stops the work on each shard, releases the shard leases and its
// member lease, and returns.
func (c *Coordinator) Run(ctx context.Context) {
	defer c.opts.Metrics.Register(metrics.CollectorFunc(c.collect))()
	var wg sync.WaitGroup
	wg.Go(func() { c.member.Run(ctx) })
	for _, e := range c.electors {
		wg.Go(func() { e.Run(ctx) })
	}
	wait := time.NewTimer(0)
	defer wait.Stop()
	for {
		select {
		case <-ctx.Done():
			for i := range c.want {
				c.want[i].Store(false)
			}
			wg.Wait()
			return
		case <-wait.C:
		}
		wait.Reset(c.plan(ctx))
	}
}

// collect reports which shards this replica holds (Options.Metrics).
func (c *Coordinator) collect(emit func(*metrics.Desc, metrics.Sample)) {
	for i, e := range c.electors {
		owned := 0.0
		if e.IsLeader() {
			owned = 1
		}
		emit(metrics.ShardOwned, metrics.Sample{LabelValues: []string{strconv.Itoa(i)}, Value: owned})
	}
}

// plan reads the group once and sets, for each shard, whether this
// replica should hold it, waking the shard's elector when that changed.
// Who holds each shard is taken from that same read, not from what each
// shard's elector saw at its own last read: one snapshot, so that two
// replicas planning at the same moment see the same holders and agree on
// who takes a free shard. A shard held here is handed over only once the
// plans have given it away for a RetryPeriod (handOver). It returns when
// to plan again: after a RetryPeriod, or when a member lease expires on
// our clock, if sooner, so that a dead replica's shards are reassigned at
// once.
func (c *Coordinator) plan(ctx context.Context) time.Duration {
	next := c.opts.Timing.RetryPeriod
	rctx, cancel := context.WithTimeout(ctx, c.opts.Timing.RenewDeadline)
	defer cancel()
	recs, err := c.opts.Group.List(rctx)
	if err != nil {
		if ctx.Err() == nil {
			c.opts.Logger.Warn("sharding: listing the leases failed", "group", c.opts.Name, "error", err)
		}
		return next
	}
	now := time.Now()
	live := c.live(now, recs)
	for _, m := range c.members {
		if d := m.Expiry().Sub(now); d > 0 && d < next {
			next = d
		}
	}
	current := make([]string, len(c.electors))
	for i := range current {
		current[i] = recs[c.shardLease(i)].HolderIdentity // "" when free or absent
	}
	for i, owner := range Plan(current, live) {
		want := owner == c.opts.Identity
		if !want && current[i] == c.opts.Identity {
			var wait time.Duration
			want, wait = c.handOver(now, i)
			if want {
				next = min(next, wait)
			}
		} else {
			c.giving[i] = time.Time{}
		}
		if c.want[i].Swap(want) != want {
			c.electors[i].Poke()
		}
	}
	return next
}

// handOver is asked when the plan gives shard i, held here, to another
// member. It says to keep the shard (and for how long at most) until the
// plans have given it away for a RetryPeriod. Replicas learn that a member
// joined or died each at its own next List, up to a RetryPeriod apart; in
// between, one that still counts a dead member as alive sees the others
// take its shards and finds itself over its share, and one that has not
// yet seen a new member finds it otherwise. A shard handed over on such a
// plan would be free until its taker's next plan, for nothing: the plan
// after the others' has caught up keeps it here.
func (c *Coordinator) handOver(now time.Time, i int) (keep bool, wait time.Duration) {
	if c.giving[i].IsZero() {
		c.giving[i] = now
	}
	wait = c.giving[i].Add(c.opts.Timing.RetryPeriod).Sub(now)
	return wait > 0, wait
}

// live returns the members whose member lease is held and, on our clock,
// not expired: this replica always, the others by the follower's rule.
func (c *Coordinator) live(now time.Time, recs map[string]leaderelection.Record) []string {
	out := []string{c.opts.Identity}
	seen := map[string]bool{}
	for name, rec := range recs {
		if rec.HolderIdentity == "" || rec.HolderIdentity == c.opts.Identity || name != c.memberLease(rec.HolderIdentity) {
			continue
		}
		m, ok := c.members[name]
		if !ok {
			m = leaderelection.NewMachine(c.opts.Timing)
			c.members[name] = m
		}
		m.Observe(now, &rec)
		seen[name] = true
		if now.Before(m.Expiry()) {
			out = append(out, rec.HolderIdentity)
		}
	}
	for name := range c.members {
		if !seen[name] {
			delete(c.members, name) // its lease is gone or released
		}
	}
	return out
}

// hold is a shard's OnStartedLeading: it opens the shard to the workers,
// re-enqueues the keys parked while it was not held, and returns once the
// term is over and the last worker in it has left.
func (c *Coordinator) hold(ctx context.Context, shard int) {
	c.mu.Lock()
	st := &c.shards[shard]
	st.ctx, st.left = ctx, make(chan struct{})
	parked := c.parked[shard]
	c.parked[shard] = map[string]struct{}{}
	c.mu.Unlock()
	if c.opts.OnHeld != nil {
		c.opts.OnHeld(shard, true)
	}
	for key := range parked {
		c.opts.Queue.Add(key)
	}

	<-ctx.Done()

	c.mu.Lock()
	st.ctx = nil
	left := st.left
	if st.inside == 0 {
		close(left)
	}
	c.mu.Unlock()
	<-left
	if c.opts.OnHeld != nil {
		c.opts.OnHeld(shard, false)
	}
}

// Enter asks to process key. If this replica holds the key's shard, ok is
// true: process the key under ctx, which ends with the shard's term, and
// call leave when done; the shard is not handed over before. If not, the
// key is parked (ok false): call the queue's Done and move on; the key
// goes back to the queue when this replica takes the shard, unless its
// object is gone by then (Options.Exists).
func (c *Coordinator) Enter(key string) (ctx context.Context, leave func(), ok bool) {
	shard := ShardOf(key, len(c.electors))
	c.mu.Lock()
	defer c.mu.Unlock()
	st := &c.shards[shard]
	if st.ctx == nil || st.ctx.Err() != nil {
		c.parkLocked(shard, key)
		return nil, nil, false
	}
	st.inside++
	term, left := st.ctx, st.left
	var once sync.Once
	return term, func() { once.Do(func() { c.leave(shard, term, left) }) }, true
}

// parkLocked keeps key for when this replica takes shard, or lets it go
// if its object is gone (Options.Exists): nothing is left to reconcile
// here, and a parked set that kept every key ever seen would grow without
// bound under churn.
func (c *Coordinator) parkLocked(shard int, key string) {
	if !c.opts.Exists(key) {
		delete(c.parked[shard], key)
		return
	}
	c.parked[shard][key] = struct{}{}
}

// Admit is Enter for a reconcile.Loop (it is a reconcile.Gate, so a Loop
// plugs in with Gate: coordinator): a key of a held shard is reconciled
// under the shard's term, and one of another shard is parked and dropped
// by the loop until this replica takes the shard. It fails only when ctx
// is done: the loop is stopping.
func (c *Coordinator) Admit(ctx context.Context, key string) (term context.Context, leave func(), ok bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, false, err
	}
	term, leave, ok = c.Enter(key)
	return term, leave, ok, nil
}

func (c *Coordinator) leave(shard int, term context.Context, left chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := &c.shards[shard]
	st.inside--
	if st.inside == 0 && st.ctx != term {
		close(left)
	}
}

// Holds tells, on the clock, whether this replica holds key's shard now:
// ask it right before a write (see package leaderelection on fencing).
func (c *Coordinator) Holds(key string) bool {
	return c.electors[ShardOf(key, len(c.electors))].IsLeader()
}

// Held returns the shards this replica holds now.
func (c *Coordinator) Held() []int {
	var out []int
	for i, e := range c.electors {
		if e.IsLeader() {
			out = append(out, i)
		}
	}
	return out
}

// Shards is K.
func (c *Coordinator) Shards() int { return len(c.electors) }
