package controller_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/seed31a95821/informer/examples/controller"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/leaderelection"
	"github.com/seed31a95821/informer/rest"
)

// fastTiming keeps the fleet tests short: the rule is the same at any
// scale, and the synctest tests of package leaderelection cover the
// defaults.
var fastTiming = leaderelection.Config{LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 500 * time.Millisecond}

// fleetLog records what the replicas of a test fleet said and did.
type fleetLog struct {
	mu     sync.Mutex // guards events and spans
	events []fleetEvent
	spans  []span
}

type fleetEvent struct {
	id   string
	lead bool // true: started leading; false: stopped
	at   time.Time
}

// span is one reconcile.
type span struct {
	id, key    string
	start, end time.Time
}

// logger returns a logger for replica id whose lines about leading are
// recorded as events.
func (l *fleetLog) logger(id string) *slog.Logger {
	return slog.New(slog.NewTextHandler(lineFunc(func(line string) {
		switch {
		case strings.Contains(line, ` leads"`):
			l.add(fleetEvent{id: id, lead: true, at: time.Now()})
		case strings.Contains(line, ` stopped leading"`):
			l.add(fleetEvent{id: id, at: time.Now()})
		}
	}), nil))
}

// lineFunc is an io.Writer that hands each write, one log line, to a func.
type lineFunc func(line string)

func (f lineFunc) Write(p []byte) (int, error) {
	f(string(p))
	return len(p), nil
}

func (l *fleetLog) add(e fleetEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *fleetLog) trace(id string) func(string, time.Time, time.Time) {
	return func(key string, start, end time.Time) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.spans = append(l.spans, span{id: id, key: key, start: start, end: end})
	}
}

// leaders returns who leads now, by the events.
func (l *fleetLog) leaders() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	leading := map[string]bool{}
	for _, e := range l.events {
		leading[e.id] = e.lead
	}
	var out []string
	for id, yes := range leading {
		if yes {
			out = append(out, id)
		}
	}
	return out
}

// last returns the time of the last event of id with the given kind.
func (l *fleetLog) last(id string, lead bool) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	var at time.Time
	for _, e := range l.events {
		if e.id == id && e.lead == lead {
			at = e.at
		}
	}
	return at
}

// requireNoOverlap asserts that no key was reconciled by two replicas at
// overlapping times.
func (l *fleetLog) requireNoOverlap(t *testing.T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, a := range l.spans {
		for _, b := range l.spans[i+1:] {
			if a.key == b.key && a.id != b.id && a.start.Before(b.end) && b.start.Before(a.end) {
				t.Fatalf("%s reconciled by %s and %s at once: %v", a.key, a.id, b.id, []span{a, b})
			}
		}
	}
}

// waitLeader waits until exactly one replica other than not leads.
func (l *fleetLog) waitLeader(t *testing.T, within time.Duration, not string) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if ls := l.leaders(); len(ls) == 1 && ls[0] != not {
			return ls[0]
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no single leader other than %q within %v: %v", not, within, l.leaders())
	return ""
}

// startReplica runs one replica until its stop function is called.
func startReplica(t *testing.T, cfg rest.Config, id string, log *fleetLog) (stop func()) {
	t.Helper()
	c, err := controller.New(cfg, controller.Options{Logger: log.logger(id), Trace: log.trace(id),
		Fleet: &controller.Fleet{Identity: id, Timing: fastTiming}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			require.NoError(t, <-done)
		})
	}
}

// The API server answers 503 on the Lease for longer than the renew
// deadline: the leader steps down in time, nobody leads during the
// outage, and one replica leads again after it. The informers are not
// affected; the new leader reconciles at once from its warm cache.
func TestFleetOutageLongerThanRenewDeadline(t *testing.T) {
	defer goleak.VerifyNone(t)
	srv, cfg, k := shop(t)
	defer srv.Close() // before the leak check
	k.Apply(Deployment("web", "web"), Pod("web-1", "web"))

	var log fleetLog
	for i := range 3 {
		defer startReplica(t, cfg, fmt.Sprint("r", i), &log)()
	}
	leader := log.waitLeader(t, 5*time.Second, "")
	k.WaitForSummary("web", "pods=1 services=")

	outage := time.Now()
	srv.Faults().FailNext(fakeapi.Failure{Resource: "leases", Code: 503, Count: 1 << 30})
	time.Sleep(fastTiming.RenewDeadline + 200*time.Millisecond)
	require.Empty(t, log.leaders(), "the leader stepped down within the renew deadline")
	stepDown := log.last(leader, false).Sub(outage)
	require.Less(t, stepDown, fastTiming.RenewDeadline+100*time.Millisecond)
	t.Logf("figure: the leader stepped down %v after the outage began (renew deadline %v)", stepDown, fastTiming.RenewDeadline)
	time.Sleep(2 * fastTiming.LeaseDuration)
	require.Empty(t, log.leaders(), "nobody leads while nobody can write the lease")

	srv.Faults().Reset()
	back := time.Now()
	next := log.waitLeader(t, fastTiming.LeaseDuration+fastTiming.RetryPeriod+time.Second, "")
	t.Logf("figure: %s led %v after the outage ended", next, log.last(next, true).Sub(back))
	k.Apply(Pod("web-2", "web"))
	k.WaitForSummary("web", "pods=2 services=")
	log.requireNoOverlap(t)
}

// SIGTERM of the leader (here: its context cancelled): it finishes its
// reconciles, releases the lease, and a successor leads within a retry
// period plus a second, then reconciles at once from its warm cache,
// without a list (every list fails from the handover on).
func TestFleetGracefulHandover(t *testing.T) {
	defer goleak.VerifyNone(t)
	srv, cfg, k := shop(t)
	defer srv.Close() // before the leak check
	k.Apply(Deployment("web", "web"), Pod("web-1", "web"))

	var log fleetLog
	stops := map[string]func(){}
	for i := range 3 {
		id := fmt.Sprint("r", i)
		stops[id] = startReplica(t, cfg, id, &log)
		defer stops[id]()
	}
	leader := log.waitLeader(t, 5*time.Second, "")
	k.WaitForSummary("web", "pods=1 services=")

	// Warm standby: from here on every list fails; the successor needs
	// none, its caches synced before it won.
	for _, r := range []string{"deployments", "pods", "services"} {
		srv.Faults().FailNext(fakeapi.Failure{Verb: "list", Resource: r, Count: 1 << 30, Code: 500})
	}
	term := time.Now()
	stops[leader]()
	next := log.waitLeader(t, fastTiming.RetryPeriod+time.Second, leader)
	handover := log.last(next, true).Sub(term)
	require.Less(t, handover, fastTiming.RetryPeriod+time.Second)
	t.Logf("figure: %s led %v after %s was stopped (retry period %v)", next, handover, leader, fastTiming.RetryPeriod)
	k.Apply(Pod("web-2", "web"))
	k.WaitForSummary("web", "pods=2 services=")
	log.requireNoOverlap(t)
}

// Three replicas split the Deployments over 8 shard Leases: every
// Deployment is summarised, each by the holder of its shard, and when one
// replica stops its shards move to the others and the work goes on.
func TestFleetShards(t *testing.T) {
	defer goleak.VerifyNone(t)
	srv, cfg, k := shop(t)
	defer srv.Close() // before the leak check
	for i := range 20 {
		k.Apply(Deployment(fmt.Sprint("web-", i), "web"))
	}
	k.Apply(Pod("web-1", "web"))

	var log fleetLog
	var heldMu sync.Mutex
	held := map[int]string{}
	stops := map[string]func(){}
	for i := range 3 {
		id := fmt.Sprint("r", i)
		c, err := controller.New(cfg, controller.Options{Logger: slog.New(slog.NewTextHandler(t.Output(), nil)), Trace: log.trace(id),
			Fleet: &controller.Fleet{Identity: id, Timing: fastTiming, Shards: 8, OnHeld: func(s int, yes bool) {
				heldMu.Lock()
				defer heldMu.Unlock()
				if yes {
					if held[s] != "" {
						t.Errorf("shard %d taken by %s while %s holds it", s, id, held[s])
					}
					held[s] = id
				} else if held[s] == id {
					delete(held, s)
				}
			}}})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- c.Run(ctx) }()
		var once sync.Once
		stops[id] = func() { once.Do(func() { cancel(); require.NoError(t, <-done) }) }
		defer stops[id]()
	}
	for i := range 20 {
		k.WaitForSummary(fmt.Sprint("web-", i), "pods=1 services=")
	}
	stops["r0"]()
	k.Apply(Pod("web-2", "web"))
	for i := range 20 {
		k.WaitForSummary(fmt.Sprint("web-", i), "pods=2 services=")
	}
	log.requireNoOverlap(t)
	log.mu.Lock()
	defer log.mu.Unlock()
	who := map[string]map[string]bool{}
	for _, s := range log.spans {
		if who[s.key] == nil {
			who[s.key] = map[string]bool{}
		}
		who[s.key][s.id] = true
	}
	require.Len(t, who, 20)
}
