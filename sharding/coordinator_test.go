package sharding

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed31a95821/informer/leaderelection"
	"github.com/seed31a95821/informer/reconcile"
	"github.com/seed31a95821/informer/workqueue"
)

// cutGroup is one replica's view of a shared group: down cuts it off
// (a crashed replica: its requests fail, it renews nothing).
type cutGroup struct {
	LeaseGroup
	down *atomic.Bool
}

func (g cutGroup) Lock(name string) leaderelection.LeaseStore {
	return cutStore{LeaseStore: g.LeaseGroup.Lock(name), down: g.down}
}

func (g cutGroup) List(ctx context.Context) (map[string]leaderelection.Record, error) {
	if g.down.Load() {
		return nil, errCut
	}
	return g.LeaseGroup.List(ctx)
}

type cutStore struct {
	leaderelection.LeaseStore
	down *atomic.Bool
}

var errCut = errors.New("replica cut off")

func (s cutStore) Get(ctx context.Context) (*leaderelection.Record, error) {
	if s.down.Load() {
		return nil, errCut
	}
	return s.LeaseStore.Get(ctx)
}

func (s cutStore) Update(ctx context.Context, r leaderelection.Record) (*leaderelection.Record, error) {
	if s.down.Load() {
		return nil, errCut
	}
	return s.LeaseStore.Update(ctx, r)
}

// span is one key processed by one replica.
type span struct {
	replica, key string
	start, end   time.Time
}

// shardFleet runs replicas, each with its queue, a Coordinator and a
// reconcile.Loop of two workers behind it, every replica fed every key (as every replica's informer
// sees every object).
type shardFleet struct {
	t      *testing.T
	group  MemoryGroup
	shards int
	keys   []string

	mu       sync.Mutex // guards spans and heldAt
	spans    []span
	replicas map[string]*replica
}

type replica struct {
	coord  *Coordinator
	queue  *workqueue.Queue[string]
	down   atomic.Bool
	begun  atomic.Int32 // reconciles started
	cancel context.CancelFunc
	done   sync.WaitGroup
}

func (f *shardFleet) start(id string) *replica {
	r := &replica{queue: workqueue.New(workqueue.Options[string]{})}
	var err error
	r.coord, err = New(Options{Identity: id, Shards: f.shards, Group: cutGroup{LeaseGroup: &f.group, down: &r.down}, Queue: r.queue,
		Exists: func(string) bool { return true }})
	require.NoError(f.t, err)
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.done.Go(func() { r.coord.Run(ctx) })
	// A test that fails half way stops the replicas all the same, so that
	// the bubble ends with the one failure and not with a deadlock.
	f.t.Cleanup(func() { f.stop(id) })
	loop := &reconcile.Loop{Queue: r.queue, Workers: 2, Gate: r.coord,
		Reconcile: func(ctx context.Context, key string) (reconcile.Result, error) {
			start := time.Now()
			r.begun.Add(1)
			f.requireLease(id, key, "starts")
			time.Sleep(10 * time.Millisecond) // the reconcile
			f.requireLease(id, key, "ends")
			f.mu.Lock()
			f.spans = append(f.spans, span{id, key, start, time.Now()})
			f.mu.Unlock()
			return reconcile.Result{}, nil
		}}
	r.done.Go(func() { _ = loop.Run(ctx) })
	for _, k := range f.keys {
		r.queue.Add(k)
	}
	f.mu.Lock()
	f.replicas[id] = r
	f.mu.Unlock()
	return r
}

// requireLease fails the test unless the lease of key's shard names id,
// as the store has it: a reconcile runs only while its replica holds the
// shard (package doc), from its start to its end, since a shard is handed
// over only after the workers in it have left, and a crashed replica's
// term ends before anyone may take its lease. (Holds is not the rule: it
// answers "may I write now", and turns false as soon as the term ends,
// while a reconcile admitted under the term may still be running, its
// context done, before the lease goes.)
func (f *shardFleet) requireLease(id, key, when string) {
	shard := ShardOf(key, f.shards)
	rec, err := f.group.Lock(fmt.Sprintf("shards-shard-%d", shard)).Get(context.Background())
	if err != nil || rec == nil || rec.HolderIdentity != id {
		f.t.Errorf("%s: a reconcile of %s %s while the lease of shard %d is %+v (%v)", id, key, when, shard, rec, err)
	}
}

func (f *shardFleet) stop(id string) {
	r := f.replicas[id]
	r.cancel() // the Loop drains and shuts its queue down
	r.done.Wait()
}

// held returns who holds each shard, "" for nobody, and fails if two do.
func (f *shardFleet) held() []string {
	out := make([]string, f.shards)
	for id, r := range f.replicas {
		if r.down.Load() {
			continue
		}
		for _, s := range r.coord.Held() {
			require.Empty(f.t, out[s], "shard %d held by %s and %s", s, out[s], id)
			out[s] = id
		}
	}
	return out
}

func (f *shardFleet) requireNoOverlap() {
	f.mu.Lock()
	defer f.mu.Unlock()
	byKey := map[string][]span{}
	for _, s := range f.spans {
		byKey[s.key] = append(byKey[s.key], s)
	}
	for key, ss := range byKey {
		for i, a := range ss {
			for _, b := range ss[i+1:] {
				if a.replica != b.replica && a.start.Before(b.end) && b.start.Before(a.end) {
					f.t.Fatalf("%s processed by %s and %s at once", key, a.replica, b.replica)
				}
			}
		}
	}
}

// processedBy returns, per key, who processed it last.
func (f *shardFleet) processedSince(t time.Time) map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]string{}
	for _, s := range f.spans {
		if !s.start.Before(t) {
			out[s.key] = s.replica
		}
	}
	return out
}

func settle(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

// Three replicas split 1,000 keys over 16 shards, fairly; one crashes and
// its shards are taken within LeaseDuration plus RetryPeriod; a fourth
// joins and the shards rebalance, moving only what must move; no key is
// ever processed by two replicas at once, and every key is processed by
// the holder of its shard.
func TestCoordinatorFleet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &shardFleet{t: t, shards: 16, replicas: map[string]*replica{}}
		for i := range 1000 {
			f.keys = append(f.keys, fmt.Sprintf("ns/key-%d", i))
		}
		for _, id := range []string{"a", "b", "c"} {
			f.start(id)
		}
		settle(10 * time.Second)
		held := f.held()
		require.NotContains(t, held, "", "every shard held: %v", held)
		for _, id := range []string{"a", "b", "c"} {
			n := len(f.replicas[id].coord.Held())
			require.True(t, n == 5 || n == 6, "%s holds %d of 16", id, n)
		}
		done := f.processedSince(time.Time{})
		require.Len(t, done, 1000, "every key processed once its shard was taken")
		for key, who := range done {
			require.Equal(t, held[ShardOf(key, 16)], who, key)
		}

		// c crashes: it stops at its renew deadline; a and b take its
		// shards within LeaseDuration + RetryPeriod.
		cShards := f.replicas["c"].coord.Held()
		crash := time.Now()
		f.replicas["c"].down.Store(true)
		deadline := crash.Add(leaderelection.DefaultLeaseDuration + leaderelection.DefaultRetryPeriod)
		for {
			held = f.held()
			if !slices.Contains(held, "") && !slices.Contains(held, "c") {
				break
			}
			require.False(t, time.Now().After(deadline), "c's shards %v not taken by %v: %v", cShards, deadline.Sub(crash), held)
			settle(100 * time.Millisecond)
		}
		t.Logf("c's shards taken %v after the crash", time.Since(crash))
		for _, s := range cShards {
			f.replicas["a"].queue.Add(f.keyOf(s))
			f.replicas["b"].queue.Add(f.keyOf(s))
		}
		settle(time.Second)

		// d joins: it takes a fair share from a and b only.
		before := f.held()
		f.start("d")
		settle(20 * time.Second)
		after := f.held()
		require.NotContains(t, after, "")
		for s := range after {
			if before[s] != after[s] {
				require.Equal(t, "d", after[s], "shard %d moved from %s to %s", s, before[s], after[s])
			}
		}
		for _, id := range []string{"a", "b", "d"} {
			require.Len(t, f.replicas[id].coord.Held(), map[bool]int{true: 5, false: 6}[len(f.replicas[id].coord.Held()) == 5], id)
		}
		f.requireNoOverlap()

		f.stop("d")
		f.stop("a")
		f.stop("b")
		f.replicas["c"].down.Store(false)
		f.stop("c")
	})
}

// keyOf returns a key of shard s.
func (f *shardFleet) keyOf(s int) string {
	for _, k := range f.keys {
		if ShardOf(k, f.shards) == s {
			return k
		}
	}
	return ""
}

// A coordinator is a reconcile.Gate: a Loop plugs in with Gate: coord.
var _ reconcile.Gate = (*Coordinator)(nil)

// A Loop behind a Coordinator reconciles no key of a shard held by
// another replica (the Reconcile of the harness fails the test if one
// runs without its shard), and reconciles the keys of a shard at once
// when it takes the shard. b holds all 8 shards; a starts with every key
// queued and reconciles none until the plan gives it its half; then a
// reconciles exactly the keys of its shards, each after taking it. With
// the old once-only gate a has no way to hold a key back: it reconciles
// every key at start.
func TestLoopBehindCoordinatorWorksOnlyOnHeldShards(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &shardFleet{t: t, shards: 8, replicas: map[string]*replica{}}
		for i := range 100 {
			f.keys = append(f.keys, fmt.Sprintf("ns/key-%d", i))
		}
		f.start("b")
		settle(10 * time.Second)
		require.Len(t, f.replicas["b"].coord.Held(), 8)

		a := f.start("a")
		synctest.Wait()
		require.Zero(t, a.begun.Load(), "a reconciled before holding a shard")
		settle(20 * time.Second)
		held := f.held()
		require.Len(t, f.replicas["a"].coord.Held(), 4, "%v", held)
		byA := map[string]bool{}
		f.mu.Lock()
		for _, s := range f.spans {
			if s.replica == "a" {
				byA[s.key] = true
			}
		}
		f.mu.Unlock()
		for _, key := range f.keys {
			mine := held[ShardOf(key, 8)] == "a"
			require.Equal(t, mine, byA[key], "%s of shard %d (held by %s)", key, ShardOf(key, 8), held[ShardOf(key, 8)])
		}
		f.requireNoOverlap()
		f.stop("a")
		f.stop("b")
	})
}

// A replica that never holds a shard sees objects of it come and go: each
// is parked when its create comes through, and let go when its delete
// does, so the parked keys stay those of the objects still there. Before,
// every key ever parked stayed: 1000 here, and without end in a fleet.
// The one object left is still parked, and goes back to the queue when the
// shard is taken.
func TestParkedKeysDoNotGrowWithChurn(t *testing.T) {
	queue := workqueue.New(workqueue.Options[string]{})
	defer queue.ShutDown()
	live := map[string]bool{}
	c, err := New(Options{Identity: "a", Shards: 1, Group: &MemoryGroup{}, Queue: queue,
		Exists: func(key string) bool { return live[key] }})
	require.NoError(t, err)
	parked := func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.parked[0])
	}

	live["ns/kept"] = true
	_, _, ok := c.Enter("ns/kept")
	require.False(t, ok, "the shard is not held")
	for i := range 1000 {
		key := fmt.Sprintf("ns/churn-%d", i)
		live[key] = true
		_, _, ok := c.Enter(key) // its create
		require.False(t, ok)
		delete(live, key)
		_, _, _ = c.Enter(key) // its delete
	}
	require.Equal(t, 1, parked(), "only the object still there is parked")

	term, end := context.WithCancel(t.Context())
	held := make(chan struct{})
	go func() { defer close(held); c.hold(term, 0) }()
	key, _ := queue.Get() // the shard is taken: the parked key goes back
	require.Equal(t, "ns/kept", key)
	queue.Done(key)
	end()
	<-held
	require.Zero(t, queue.Len(), "and only it")
}

// New refuses a Coordinator without Exists: its parked keys would grow
// for ever.
func TestNewRequiresExists(t *testing.T) {
	_, err := New(Options{Identity: "a", Shards: 1, Group: &MemoryGroup{}, Queue: workqueue.New(workqueue.Options[string]{})})
	require.ErrorIs(t, err, leaderelection.ErrInvalidConfig)
}

// holdLease writes rec into the group's lease name, as its holder would.
func holdLease(t *testing.T, g *MemoryGroup, name, holder string) {
	t.Helper()
	store := g.Lock(name)
	rec, err := store.Get(t.Context())
	require.NoError(t, err)
	next := leaderelection.Record{HolderIdentity: holder, LeaseDuration: leaderelection.DefaultLeaseDuration,
		AcquireTime: time.Now(), RenewTime: time.Now()}
	if rec == nil {
		_, err = store.Create(t.Context(), next)
	} else {
		next.ResourceVersion = rec.ResourceVersion
		_, err = store.Update(t.Context(), next)
	}
	require.NoError(t, err)
}

// A replica plans from one read of the group: who holds each shard is
// what that List says, as for every replica planning at the same time,
// not what each shard's elector saw at its own last read (up to a
// RetryPeriod older). Here b holds shard s, which the plan would give a
// if it were free, and a's elector has not read its lease yet: a must
// want the other shard. Before, a planned as if s were free, wanted s
// (held by b, so not taken) and left the other to b, whose fresh view
// kept s: the other shard stayed free until a's elector read s again,
// and in TestCoordinatorFleet a crashed replica's shards were taken
// after LeaseDuration plus two or three RetryPeriods, not one.
func TestPlanReadsHoldersFromOneList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &MemoryGroup{}
		queue := workqueue.New(workqueue.Options[string]{})
		defer queue.ShutDown()
		c, err := New(Options{Identity: "a", Shards: 2, Group: g, Queue: queue, Exists: func(string) bool { return true }})
		require.NoError(t, err)
		s := slices.Index(Plan([]string{"", ""}, []string{"a", "b"}), "a") // the shard a would take if both were free
		other := 1 - s
		holdLease(t, g, c.memberLease("b"), "b")
		holdLease(t, g, c.shardLease(s), "b")

		c.plan(t.Context())
		require.False(t, c.want[s].Load(), "a wants shard %d, which b holds", s)
		require.True(t, c.want[other].Load(), "a leaves the free shard %d to b, which holds its share", other)
	})
}

// A replica hands a shard over only once its plans have given it away
// for a RetryPeriod: the time replicas may disagree on who is alive, as
// each learns of a death or a join at its own next List. Here a holds
// both shards and a member x is seen for a moment (as a dead member is
// by a replica whose view lags): a keeps its shards; once x stays, a
// hands one over, a RetryPeriod after the first plan that gave it away.
// Before, a released the shard at once, and it stayed free until the
// next plan gave it back to a.
func TestHandOverWaitsARetryPeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &MemoryGroup{}
		queue := workqueue.New(workqueue.Options[string]{})
		defer queue.ShutDown()
		c, err := New(Options{Identity: "a", Shards: 2, Group: g, Queue: queue, Exists: func(string) bool { return true }})
		require.NoError(t, err)
		holdLease(t, g, c.shardLease(0), "a")
		holdLease(t, g, c.shardLease(1), "a")
		require.Equal(t, time.Second*0, c.plan(t.Context())-leaderelection.DefaultRetryPeriod)
		require.True(t, c.want[0].Load() && c.want[1].Load(), "a alone wants both")

		given := slices.Index(Plan([]string{"a", "a"}, []string{"a", "x"}), "x")
		holdLease(t, g, c.memberLease("x"), "x")
		wait := c.plan(t.Context())
		require.True(t, c.want[given].Load(), "a keeps shard %d on a plan seen once", given)
		require.Equal(t, leaderelection.DefaultRetryPeriod, wait)

		time.Sleep(time.Second)
		holdLease(t, g, c.memberLease("x"), "") // x is gone after all
		time.Sleep(time.Second)
		c.plan(t.Context())
		require.True(t, c.want[given].Load(), "the plan that gave shard %d away did not last", given)

		holdLease(t, g, c.memberLease("x"), "x") // x is back, and stays
		c.plan(t.Context())
		require.True(t, c.want[given].Load(), "a plan seen once more starts the wait over")
		time.Sleep(time.Second)
		c.plan(t.Context())
		require.True(t, c.want[given].Load(), "half a RetryPeriod")
		time.Sleep(time.Second)
		c.plan(t.Context())
		require.False(t, c.want[given].Load(), "a RetryPeriod later shard %d goes to x", given)
		require.True(t, c.want[1-given].Load(), "and a keeps the other")
	})
}

// A handover ends the shard's term, waits for the workers in it, and only
// then releases the lease. In between Holds is already false (the term is
// over: no new write) while a reconcile admitted under the term may still
// run, its context done; the lease still names this replica, so no one
// else processes the key meanwhile. This is why TestCoordinatorFleet
// checks the lease, not Holds: with Holds it failed now and then, when a
// worker was admitted just before a handover.
func TestHandOverWaitsForTheWorkersInTheShard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &MemoryGroup{}
		queue := workqueue.New(workqueue.Options[string]{})
		defer queue.ShutDown()
		c, err := New(Options{Identity: "a", Shards: 2, Group: g, Queue: queue, Exists: func(string) bool { return true }})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		var running sync.WaitGroup
		running.Go(func() { c.Run(ctx) })
		settle(5 * time.Second)
		require.Equal(t, []int{0, 1}, c.Held())

		given := slices.Index(Plan([]string{"a", "a"}, []string{"a", "x"}), "x")
		key := "ns/key-0"
		for i := 1; ShardOf(key, 2) != given; i++ {
			key = fmt.Sprintf("ns/key-%d", i)
		}
		term, leave, ok := c.Enter(key)
		require.True(t, ok)
		holdLease(t, g, c.memberLease("x"), "x") // x joins: a hands shard `given` over
		settle(5 * time.Second)

		require.False(t, c.Holds(key), "the term of shard %d is over", given)
		require.Error(t, term.Err(), "and the reconcile's context says so")
		rec, err := g.Lock(c.shardLease(given)).Get(t.Context())
		require.NoError(t, err)
		require.Equal(t, "a", rec.HolderIdentity, "the lease waits for the worker")
		_, _, ok = c.Enter(key)
		require.False(t, ok, "no one is admitted meanwhile")

		leave()
		synctest.Wait()
		rec, err = g.Lock(c.shardLease(given)).Get(t.Context())
		require.NoError(t, err)
		require.Empty(t, rec.HolderIdentity, "released once the worker left")
		cancel()
		running.Wait()
	})
}
