package leaderelection

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
)

// candidateStore is one candidate's view of a shared MemoryStore: down
// models a crashed or partitioned candidate (its requests fail), hang one
// whose requests never return until unhung, ignoring their context.
type candidateStore struct {
	*MemoryStore
	down    atomic.Bool
	hanging atomic.Bool
	unhang  chan struct{} // closed to end every hang
}

var errDown = errors.New("candidate cut off")

func (c *candidateStore) gate(ctx context.Context) error {
	if c.hanging.Load() {
		<-c.unhang
	}
	if c.down.Load() {
		return errDown
	}
	return ctx.Err()
}

func (c *candidateStore) Get(ctx context.Context) (*Record, error) {
	if err := c.gate(ctx); err != nil {
		return nil, err
	}
	return c.MemoryStore.Get(ctx)
}

func (c *candidateStore) Create(ctx context.Context, rec Record) (*Record, error) {
	if err := c.gate(ctx); err != nil {
		return nil, err
	}
	return c.MemoryStore.Create(ctx, rec)
}

func (c *candidateStore) Update(ctx context.Context, rec Record) (*Record, error) {
	if err := c.gate(ctx); err != nil {
		return nil, err
	}
	return c.MemoryStore.Update(ctx, rec)
}

// interval is one term as its own callbacks saw it.
type interval struct {
	id         string
	start, end time.Time // end is zero while the term runs
}

// fleet is n candidates on one lease, each logging its terms.
type fleet struct {
	t       *testing.T
	store   *MemoryStore
	views   []*candidateStore
	cancels []context.CancelFunc
	done    []chan struct{}
	elect   []*Elector

	mu    sync.Mutex // guards terms
	terms []interval
}

func newFleet(t *testing.T, n int, release bool) *fleet {
	f := &fleet{t: t, store: &MemoryStore{Name: "default/ctl"}}
	for i := range n {
		id := fmt.Sprintf("c%d", i)
		view := &candidateStore{MemoryStore: f.store}
		e, err := New(Options{Config: Config{Identity: id}, Lock: view, ReleaseOnCancel: release,
			Callbacks: Callbacks{OnStartedLeading: func(ctx context.Context) {
				f.mu.Lock()
				f.terms = append(f.terms, interval{id: id, start: time.Now()})
				k := len(f.terms) - 1
				f.mu.Unlock()
				<-ctx.Done()
				f.mu.Lock()
				f.terms[k].end = time.Now()
				f.mu.Unlock()
			}}})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); e.Run(ctx) }()
		f.views, f.cancels, f.done, f.elect = append(f.views, view), append(f.cancels, cancel), append(f.done, done), append(f.elect, e)
	}
	return f
}

func (f *fleet) stop() {
	for i, cancel := range f.cancels {
		cancel()
		<-f.done[i]
	}
}

// leaders returns the candidates whose term is open.
func (f *fleet) leaders() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, iv := range f.terms {
		if iv.end.IsZero() {
			out = append(out, iv.id)
		}
	}
	return out
}

// lastStart is when the latest term started.
func (f *fleet) lastStart() (string, time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.terms) == 0 {
		return "", time.Time{}
	}
	iv := f.terms[len(f.terms)-1]
	return iv.id, iv.start
}

// requireNoOverlap asserts that no two terms overlapped in time.
func (f *fleet) requireNoOverlap() {
	f.mu.Lock()
	defer f.mu.Unlock()
	terms := slices.Clone(f.terms)
	slices.SortFunc(terms, func(a, b interval) int { return a.start.Compare(b.start) })
	for i := 1; i < len(terms); i++ {
		prev := terms[i-1]
		require.False(f.t, prev.end.IsZero(), "term %v still open when %v started", prev, terms[i])
		require.False(f.t, terms[i].start.Before(prev.end), "terms overlap: %v and %v", prev, terms[i])
	}
}

func (f *fleet) index(id string) int {
	var i int
	_, _ = fmt.Sscanf(id, "c%d", &i)
	return i
}

// waitLeader advances fake time until exactly one term is open, of a
// candidate other than not.
func (f *fleet) waitLeader(limit time.Duration, not ...string) string {
	f.t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		synctest.Wait()
		if l := f.leaders(); len(l) == 1 && !slices.Contains(not, l[0]) {
			return l[0]
		}
		time.Sleep(10 * time.Millisecond)
	}
	f.t.Fatalf("no single leader within %v: %v", limit, f.leaders())
	return ""
}

func TestElectorOneLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFleet(t, 3, false)
		defer f.stop()
		leader := f.waitLeader(time.Second)
		for range 30 { // a minute of renewals: the term stays with one candidate
			time.Sleep(2 * time.Second)
			synctest.Wait()
			require.Equal(t, []string{leader}, f.leaders())
		}
		require.True(t, f.elect[f.index(leader)].IsLeader())
		for _, e := range f.elect {
			require.Equal(t, leader, e.Leader(), "every candidate sees the leader")
			require.NoError(t, e.Check())
		}
		rec, _ := f.store.Get(t.Context())
		require.Equal(t, int32(0), rec.LeaseTransitions)
	})
}

// A leader cut off from the server (crashed, partitioned) stops leading at
// its renew deadline; a follower takes over within LeaseDuration plus one
// RetryPeriod of the cut, and the terms never overlap.
func TestElectorFailoverAfterCrash(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFleet(t, 3, false)
		defer f.stop()
		old := f.waitLeader(time.Second)
		time.Sleep(3 * time.Second) // somewhere between two renews
		synctest.Wait()
		cut := time.Now()
		f.views[f.index(old)].down.Store(true)
		next := f.waitLeader(DefaultLeaseDuration+DefaultRetryPeriod, old)
		_, started := f.lastStart()
		require.NotEqual(t, old, next)
		require.LessOrEqual(t, started.Sub(cut), DefaultLeaseDuration+DefaultRetryPeriod)
		f.requireNoOverlap()
		rec, _ := f.store.Get(t.Context())
		require.Equal(t, int32(1), rec.LeaseTransitions)
	})
}

// The server answers errors for longer than the renew deadline: the
// leader steps down in time, nobody leads during the outage, and one
// leads again after it.
func TestElectorOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFleet(t, 3, false)
		defer f.stop()
		f.waitLeader(time.Second)
		time.Sleep(time.Second)
		synctest.Wait()
		outage := time.Now()
		for _, v := range f.views {
			v.down.Store(true)
		}
		time.Sleep(DefaultRenewDeadline)
		synctest.Wait()
		require.Empty(t, f.leaders(), "the leader stepped down within the renew deadline")
		f.mu.Lock()
		require.LessOrEqual(t, f.terms[0].end.Sub(outage), DefaultRenewDeadline)
		f.mu.Unlock()
		time.Sleep(20 * time.Second)
		synctest.Wait()
		require.Empty(t, f.leaders(), "nobody leads during the outage")
		for _, v := range f.views {
			v.down.Store(false)
		}
		f.waitLeader(DefaultLeaseDuration + DefaultRetryPeriod)
		f.requireNoOverlap()
	})
}

// ReleaseOnCancel: the leader's work stops, it hands the lease back, and a
// successor leads within one RetryPeriod plus a second.
func TestElectorReleaseOnCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFleet(t, 3, true)
		defer f.stop()
		old := f.waitLeader(time.Second)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		stop := time.Now()
		f.cancels[f.index(old)]()
		<-f.done[f.index(old)]
		next := f.waitLeader(DefaultRetryPeriod+time.Second, old)
		_, started := f.lastStart()
		require.NotEqual(t, old, next)
		require.LessOrEqual(t, started.Sub(stop), DefaultRetryPeriod+time.Second)
		f.requireNoOverlap()
	})
}

// Without ReleaseOnCancel the successor waits for the lease to expire.
func TestElectorCancelWithoutRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFleet(t, 2, false)
		defer f.stop()
		old := f.waitLeader(time.Second)
		stop := time.Now()
		f.cancels[f.index(old)]()
		<-f.done[f.index(old)]
		f.waitLeader(DefaultLeaseDuration+DefaultRetryPeriod, old)
		_, started := f.lastStart()
		require.GreaterOrEqual(t, started.Sub(stop), DefaultLeaseDuration-DefaultRetryPeriod)
	})
}

// A leader whose requests hang (ignoring their context) still ends its
// term at the renew deadline: the watchdog cancels the term's context.
func TestElectorWatchdogEndsTermWhenRequestsHang(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		view := &candidateStore{MemoryStore: &MemoryStore{}, unhang: make(chan struct{})}
		ended := make(chan time.Time, 1)
		e, err := New(Options{Config: Config{Identity: "a"}, Lock: view,
			Callbacks: Callbacks{OnStartedLeading: func(ctx context.Context) { <-ctx.Done(); ended <- time.Now() }}})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); e.Run(ctx) }()
		synctest.Wait()
		require.True(t, e.IsLeader())
		start := time.Now()
		view.hanging.Store(true) // the next request hangs
		select {
		case at := <-ended:
			require.LessOrEqual(t, at.Sub(start), DefaultRenewDeadline)
		case <-time.After(time.Minute):
			t.Fatal("the term outlived its authority")
		}
		require.False(t, e.IsLeader())
		close(view.unhang)
		cancel()
		<-done
	})
}

// Check fails while a candidate believes it leads past its authority: its
// loop is stuck (here in a callback that blocks).
func TestElectorCheckRenewOverdue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		unblock := make(chan struct{})
		e, err := New(Options{Config: Config{Identity: "a"}, Lock: &MemoryStore{},
			Callbacks: Callbacks{OnNewLeader: func(string) { <-unblock }}})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); e.Run(ctx) }()
		synctest.Wait()
		require.NoError(t, e.Check())
		time.Sleep(DefaultRenewDeadline + DefaultRetryPeriod + time.Second)
		require.ErrorIs(t, e.Check(), ErrRenewOverdue)
		close(unblock)
		cancel()
		<-done
		require.NoError(t, e.Check())
	})
}

func TestElectorOnNewLeaderAndStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &MemoryStore{}
		var mu sync.Mutex
		var seen []string
		stopped := 0
		e, err := New(Options{Config: Config{Identity: "a"}, Lock: store, ReleaseOnCancel: true,
			Callbacks: Callbacks{
				OnNewLeader:      func(id string) { mu.Lock(); seen = append(seen, id); mu.Unlock() },
				OnStoppedLeading: func() { mu.Lock(); stopped++; mu.Unlock() },
			}})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); e.Run(ctx) }()
		synctest.Wait()
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, []string{"a"}, seen)
		require.Equal(t, 1, stopped)
		rec, _ := store.Get(t.Context())
		require.Equal(t, "", rec.HolderIdentity, "released")
	})
}

func TestConfigValidate(t *testing.T) {
	require.NoError(t, Config{Identity: "a"}.Validate())
	for _, c := range []Config{
		{},
		{Identity: "a", LeaseDuration: 5 * time.Second},
		{Identity: "a", RenewDeadline: time.Second},
	} {
		require.ErrorIs(t, c.Validate(), ErrInvalidConfig, "%+v", c)
	}
}

// A leader that stops wanting the lease (a shard to hand over) ends its
// term, waits for the term's work, releases, and the other candidate
// takes it at its next retry. A follower that does not want it never
// writes.
func TestElectorWantHandsOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &MemoryStore{}
		var wantA atomic.Bool
		wantA.Store(true)
		var workEnded atomic.Bool
		var mu sync.Mutex
		var order []string
		a, err := New(Options{Config: Config{Identity: "a"}, Lock: store, Want: wantA.Load,
			Callbacks: Callbacks{OnStartedLeading: func(ctx context.Context) {
				<-ctx.Done()
				time.Sleep(300 * time.Millisecond) // in-flight work finishing
				workEnded.Store(true)
				mu.Lock()
				order = append(order, "a's work ended")
				mu.Unlock()
			}}})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var wg sync.WaitGroup
		wg.Go(func() { a.Run(ctx) })
		synctest.Wait()
		require.True(t, a.IsLeader())
		b, err := New(Options{Config: Config{Identity: "b"}, Lock: store,
			Callbacks: Callbacks{OnStartedLeading: func(ctx context.Context) {
				mu.Lock()
				order = append(order, "b leads")
				mu.Unlock()
				<-ctx.Done()
			}}})
		require.NoError(t, err)
		wg.Go(func() { b.Run(ctx) })
		time.Sleep(5 * time.Second)
		synctest.Wait()
		require.Equal(t, "a", b.Holder())
		handover := time.Now()
		wantA.Store(false)
		for !b.IsLeader() {
			time.Sleep(10 * time.Millisecond)
		}
		require.LessOrEqual(t, time.Since(handover), 2*DefaultRetryPeriod+time.Second)
		mu.Lock()
		require.Equal(t, []string{"a's work ended", "b leads"}, order, "the release waits for the work")
		mu.Unlock()
		rec, _ := store.Get(t.Context())
		require.Equal(t, int32(1), rec.LeaseTransitions)
		cancel()
		wg.Wait()
	})
}

// A process resumed after a pause longer than its authority: the term's
// watchdog is overdue but has not run. The term's context reports the end
// from the clock, its Done agrees, and a Gate admits no worker to the
// term that is over.
func TestTermContextEndsOnTheClockBeforeTheWatchdog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var leading atomic.Bool
		leading.Store(true)
		parent, cancel := context.WithCancel(t.Context())
		defer cancel()
		term := &termContext{Context: parent, cancel: cancel, lapsed: func(time.Time) bool { return !leading.Load() }}
		var g Gate
		led := make(chan struct{})
		go func() { defer close(led); g.Lead(term) }()
		synctest.Wait()
		_, leave, err := g.Enter(t.Context())
		require.NoError(t, err, "a live term admits")
		leave()

		leading.Store(false) // the authority lapsed; no watchdog has cancelled anything
		require.ErrorIs(t, term.Err(), context.Canceled)
		select {
		case <-term.Done():
		default:
			t.Fatal("Err reported the end but Done is still open")
		}
		<-led
		enterCtx, stop := context.WithTimeout(t.Context(), time.Minute)
		defer stop()
		_, _, err = g.Enter(enterCtx)
		require.ErrorIs(t, err, context.DeadlineExceeded, "no worker is admitted to a lapsed term")
	})
}

// The same lapse inside a Gate's Enter, before anyone called Err: the
// worker is not admitted and waits for the next term.
func TestGateAdmitsNoWorkerToALapsedTerm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var leading atomic.Bool
		leading.Store(true)
		parent, cancel := context.WithCancel(t.Context())
		defer cancel()
		var g Gate
		led := make(chan struct{})
		go func() {
			defer close(led)
			g.Lead(&termContext{Context: parent, cancel: cancel, lapsed: func(time.Time) bool { return !leading.Load() }})
		}()
		synctest.Wait()
		leading.Store(false)
		enterCtx, stop := context.WithTimeout(t.Context(), time.Minute)
		defer stop()
		_, _, err := g.Enter(enterCtx)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		<-led
	})
}

// A pause longer than the authority, after which the renew runs before the
// overdue watchdog: the machine leads again, but the term whose end passed
// is over (another candidate may have led in between); a new term starts.
func TestSyncEndsATermWhoseEndPassedThoughRenewed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stopped := 0
		e, err := New(Options{Config: Config{Identity: "a"}, Lock: &MemoryStore{}, Callbacks: Callbacks{
			OnStartedLeading: func(ctx context.Context) { <-ctx.Done() },
			OnStoppedLeading: func() { stopped++ },
		}})
		require.NoError(t, err)
		ctx := t.Context()
		var current *term
		reported := ""
		e.round(ctx, true)
		e.sync(ctx, &current, &reported)
		require.NotNil(t, current)
		first := current
		first.watchdog.Reset(time.Hour) // the watchdog runs late, as after a SIGCONT
		time.Sleep(DefaultLeaseDuration + time.Second)
		e.round(ctx, true) // its request's deadline is the lapsed authority's: it fails, and the machine steps down
		e.round(ctx, true)
		require.True(t, e.IsLeader(), "the lease is taken again")
		e.sync(ctx, &current, &reported)
		require.Equal(t, 1, stopped, "the lapsed term ended")
		require.Error(t, first.ctx.Err())
		e.round(ctx, true)
		e.sync(ctx, &current, &reported)
		require.NotNil(t, current, "a new term")
		require.NotSame(t, first, current)
		e.endTerm(&current)
	})
}
