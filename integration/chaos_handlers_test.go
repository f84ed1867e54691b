package integration

import (
	"fmt"
	"maps"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/seed31a95821/informer"
)

// chaosLogLimit bounds each handler's history kept for a failure report.
const chaosLogLimit = 2000

// chaosHandler is one handler of a chaos run. It rebuilds the server's state
// from its notifications alone, checks as it goes the invariants that a
// single notification can break, and keeps its history for the report.
//
// It may be slow (delay per notification, as real work would be) or panic
// after every panicEvery-th notification, once it has recorded it: a
// recovered panic must cost the handler nothing but that call.
type chaosHandler struct {
	name       string
	opts       informer.HandlerOptions
	delay      time.Duration
	panicEvery int
	start      time.Time
	reg        *informer.Registration

	mu       sync.Mutex        // guards every field below
	state    map[string]uint64 // key -> resourceVersion: the handler's view
	lastRV   map[string]uint64 // the newest resourceVersion told for each key, deletes included
	lastType map[string]string // the last notification's type for each key
	calls    int
	log      []string // what it was told, oldest first, at most chaosLogLimit
	dropped  int      // log lines left out
	bad      []string // invariant violations
	removed  bool     // Remove's channel closed: no call may follow
}

func newChaosHandler(name string, start time.Time) *chaosHandler {
	return &chaosHandler{name: name, start: start, state: map[string]uint64{},
		lastRV: map[string]uint64{}, lastType: map[string]string{}}
}

func (h *chaosHandler) handler() informer.Handler[*corev1.Pod] {
	return informer.Handler[*corev1.Pod]{
		OnAdd: func(p *corev1.Pod, initial bool) {
			h.observe("Add", nil, p, fmt.Sprintf("initial=%v", initial))
		},
		OnUpdate: func(old, p *corev1.Pod) { h.observe("Update", old, p, "") },
		OnDelete: func(p *corev1.Pod, unknown bool) {
			h.observe("Delete", nil, p, fmt.Sprintf("finalStateUnknown=%v", unknown))
		},
	}
}

func podRV(p *corev1.Pod) uint64 {
	rv, _ := strconv.ParseUint(p.ResourceVersion, 10, 64)
	return rv
}

// observe applies one notification to the view and checks it against what
// the handler was told before:
//   - no key's resourceVersion goes backwards;
//   - an Add is of a key the handler does not hold, an Update or a Delete of
//     one it does (a coalesced Add-then-Delete is not mentioned at all);
//   - an Update's old object is the version the handler was told about last.
func (h *chaosHandler) observe(kind string, old, p *corev1.Pod, flags string) {
	if h.delay > 0 {
		time.Sleep(h.delay) // the handler's work, which makes it fall behind
	}
	key, rv := p.Namespace+"/"+p.Name, podRV(p)
	h.mu.Lock()
	h.calls++
	calls := h.calls
	line := fmt.Sprintf("%8.3fs %s %s rv=%d", time.Since(h.start).Seconds(), kind, key, rv)
	if old != nil {
		line += fmt.Sprintf(" old=%d", podRV(old))
	}
	h.record(line + " " + flags)
	if h.removed {
		h.violate("%s %s after Remove returned", kind, key)
	}
	if last, ok := h.lastRV[key]; ok && rv < last {
		h.violate("%s %s: rv went back from %d to %d", kind, key, last, rv)
	}
	held, holds := h.state[key]
	switch {
	case kind == "Add" && holds:
		h.violate("Add %s rv=%d, but the handler holds it at rv=%d", key, rv, held)
	case kind != "Add" && !holds:
		h.violate("%s %s rv=%d of a key the handler does not hold", kind, key, rv)
	case kind == "Update" && podRV(old) != held:
		h.violate("Update %s from rv=%d, but the handler was last told rv=%d", key, podRV(old), held)
	}
	if kind == "Delete" {
		delete(h.state, key)
	} else {
		h.state[key] = rv
	}
	h.lastRV[key], h.lastType[key] = max(rv, h.lastRV[key]), kind
	h.mu.Unlock()
	if h.panicEvery > 0 && calls%h.panicEvery == 0 {
		panic(fmt.Sprintf("chaos: planned panic in %s on %s", h.name, key))
	}
}

// record keeps a line of history. mu must be held.
func (h *chaosHandler) record(line string) {
	if len(h.log) < chaosLogLimit {
		h.log = append(h.log, line)
	} else {
		h.dropped++
	}
}

// violate records a broken invariant. mu must be held.
func (h *chaosHandler) violate(format string, args ...any) {
	h.bad = append(h.bad, fmt.Sprintf(format, args...))
}

// markRemoved records that the handler's Remove has completed.
func (h *chaosHandler) markRemoved() {
	h.mu.Lock()
	h.removed = true
	h.mu.Unlock()
}

// problems compares the handler's view with the server's state (key ->
// resourceVersion of the objects in scope) and returns what is wrong.
func (h *chaosHandler) problems(server map[string]uint64) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := append([]string(nil), h.bad...)
	if !maps.Equal(h.state, server) {
		out = append(out, fmt.Sprintf("%s: view %v != server %v", h.name, h.state, server))
	}
	for key, kind := range h.lastType {
		if _, ok := server[key]; !ok && kind != "Delete" {
			out = append(out, fmt.Sprintf("%s: %s vanished, but its last notification was %s", h.name, key, kind))
		}
	}
	if h.reg != nil && !h.reg.HasSynced() {
		out = append(out, h.name+": registration never synced")
	}
	return out
}

// history returns the handler's log for a failure report.
func (h *chaosHandler) history() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := append([]string(nil), h.log...)
	if h.dropped > 0 {
		out = append(out, fmt.Sprintf("(%d more lines left out)", h.dropped))
	}
	return out
}
