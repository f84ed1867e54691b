package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/seed31a95821/informer/fakeapi"
)

// The page's fault buttons, each a call on the embedded fakeapi server's Go
// API (the same faults its /fakeapi/v1/ endpoints offer over HTTP), chosen
// so that each shows one recovery path of the reflector.

// errNoFaults is the answer to a fault request when the demo watches a real
// cluster: it is read-only there.
var errNoFaults = errors.New("faults need the embedded fake API server (the demo is watching a real cluster)")

// fault is one button: what it does, and what a learner should see.
type fault struct {
	Name   string `json:"name"`
	Label  string `json:"label"`
	Expect string `json:"expect"`
	inject func(f *faultInjector)
}

// faults are the buttons, in page order.
var faults = []fault{
	{"drop", "drop watches", "every watch ends; each informer reopens its watch from its last RV: no relist",
		func(f *faultInjector) { f.srv.DropWatches() }},
	{"compact", "compact (410 → relist)", "watches stall for 1.5 s while churn writes and 3 seeded pods are deleted; then the history is compacted and the stall lifts: the streams are told 410 Expired, each informer relists, and the deletes it missed arrive as tombstones",
		(*faultInjector).compact},
	{"stall", "stall watches 10 s", "the streams go silent (events/s drops to 0, the reflector's RV falls behind the server's); after three bookmark intervals (6 s) the watchdog restarts them from the last RV; the new streams stay silent until the 10 s are up, then the held-back events arrive in one burst, and the slow handler's lag jumps",
		func(f *faultInjector) { f.srv.Faults().StallWatches("", 10*time.Second) }},
	{"throttle", "429 burst", "the next 2 requests get 429 Too Many Requests with Retry-After 2s, and the watches are dropped to meet them: the informers back off at least 2 s",
		func(f *faultInjector) {
			f.srv.Faults().FailNext(fakeapi.Failure{Count: 2, Code: 429, RetryAfterSeconds: 2, Message: "demo: too many requests"})
			f.srv.DropWatches()
		}},
	{"restart", "restart (cut connections, 503s)", "every connection is cut and the next 2 requests fail with 503, as while a server restarts: the informers back off and resume with a watch from their last RV, no relist",
		func(f *faultInjector) {
			f.srv.Faults().FailNext(fakeapi.Failure{Count: 2, Code: 503, Message: "demo: restarting"})
			f.srv.CloseClientConnections()
		}},
}

// faultInjector applies faults to the embedded server and notes each on the
// monitor's timeline.
type faultInjector struct {
	srv *fakeapi.Server // nil for a real cluster
	m   *monitor

	mu      sync.Mutex // guards pending and stopped
	pending []*time.Timer
	stopped bool
}

func newFaultInjector(srv *fakeapi.Server, m *monitor) *faultInjector {
	return &faultInjector{srv: srv, m: m}
}

// inject applies the named fault.
func (f *faultInjector) inject(name string) error {
	if f.srv == nil {
		return errNoFaults
	}
	for _, ft := range faults {
		if ft.Name == name {
			f.m.note("you", "fault", ft.Label+": "+ft.Expect)
			ft.inject(f)
			return nil
		}
	}
	return fmt.Errorf("no fault named %q", name)
}

// compact is the 410 scenario. A compaction alone breaks nothing: a watch
// that has been sent everything needs no history. So the watches are first
// held back while churn writes and a few pods the informer has cached are
// deleted (churn's own deletes mostly hit pods it has just created, which
// the informer may never have seen), then the history they still need is
// compacted away and they are let go: their next read of the log finds it
// gone, and only a relist can tell them about the deletes.
func (f *faultInjector) compact() {
	f.srv.Faults().StallWatches("", 0)
	f.deleteSeeded(3)
	f.later(1500*time.Millisecond, func() {
		f.srv.Compact()
		f.srv.Faults().ResumeWatches("")
	})
}

// deleteSeeded deletes up to n of the pods the server was seeded with.
func (f *faultInjector) deleteSeeded(n int) {
	pods, err := f.srv.Objects(corev1.SchemeGroupVersion.WithResource("pods"))
	if err != nil {
		return
	}
	for _, obj := range pods {
		if p, ok := obj.(*corev1.Pod); ok && n > 0 && strings.HasPrefix(p.Name, "seed-") {
			if f.srv.Delete(p) == nil {
				n--
			}
		}
	}
}

// later runs step after d unless stop has been called.
func (f *faultInjector) later(d time.Duration, step func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return
	}
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.pending = slices.DeleteFunc(f.pending, func(p *time.Timer) bool { return p == t })
		if !f.stopped {
			step()
		}
	})
	f.pending = append(f.pending, t)
}

// stop cancels the steps still to come; a step already running finishes
// first (it holds mu).
func (f *faultInjector) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = true
	for _, t := range f.pending {
		t.Stop()
	}
}
