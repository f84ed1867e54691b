package reflector

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

// Stats is a snapshot of what a reflector has done since New. The maps are
// fresh copies, the caller's to keep.
type Stats struct {
	// State is the current state.
	State State
	// LastSyncResourceVersion is the resourceVersion the store has reached.
	LastSyncResourceVersion string

	// Lists counts complete snapshots obtained by a paged List.
	Lists int64
	// ListRequests counts List calls: pages, fallbacks and failures.
	ListRequests int64
	// WatchListSyncs counts complete snapshots obtained by WatchList.
	WatchListSyncs int64
	// Relists counts snapshots after the first, by either means: the
	// figure a healthy reflector keeps low.
	Relists int64
	// Watches counts watch requests the server accepted, WatchList
	// included.
	Watches int64
	// Resyncs counts calls to Store.Resync.
	Resyncs int64
	// Backoffs counts waits before a retry; LastBackoff is the latest one.
	Backoffs    int64
	LastBackoff time.Duration

	// Events counts watch events received, by type (ADDED, MODIFIED,
	// DELETED, BOOKMARK, ERROR), skipped ones included.
	Events map[watch.EventType]int64
	// BytesDecoded is the ListerWatcher's count of bytes decoded, when it
	// has a BytesDecoded() int64 method (reflector/wire does); 0 otherwise.
	BytesDecoded int64
	// Errors counts failures by kind: every one reported to OnError, and
	// the probes of a resource that is not served, which are counted here
	// but reported only once (KindNotServed).
	Errors map[Kind]int64
	// TimeIn is the time spent in each state, the current one included.
	TimeIn map[State]time.Duration
}

// eventTypes are the event types counted, in counter order.
var eventTypes = [...]watch.EventType{watch.Added, watch.Modified, watch.Deleted, watch.Bookmark, watch.Error}

// eventIndex maps an event type to its counter, -1 when not counted.
func eventIndex(t watch.EventType) int {
	for i, et := range eventTypes {
		if et == t {
			return i
		}
	}
	return -1
}

// published is what the reflector's goroutine shares with readers on other
// goroutines (Stats, State, LastSyncResourceVersion). The machine keeps its
// own copies of the state it steers by; this is the window onto it.
type published struct {
	mu sync.Mutex // guards every field below

	state     State
	enteredAt time.Time // when state was entered
	lastRV    string

	lists, listRequests, watchListSyncs, relists int64
	watches, resyncs, backoffs                   int64
	lastBackoff                                  time.Duration

	events [len(eventTypes)]int64
	errors [numKinds]int64
	timeIn [numStates]time.Duration
}

// enter records a transition at now.
func (p *published) enter(s State, now time.Time) {
	p.mu.Lock()
	if !p.enteredAt.IsZero() {
		p.timeIn[p.state] += now.Sub(p.enteredAt)
	}
	p.state, p.enteredAt = s, now
	p.mu.Unlock()
}

// event records one watch event and, if rv is not empty, the progress it
// carries. It is the only per-event lock the reflector takes.
func (p *published) event(t watch.EventType, rv string) {
	i := eventIndex(t)
	p.mu.Lock()
	if i >= 0 {
		p.events[i]++
	}
	if rv != "" {
		p.lastRV = rv
	}
	p.mu.Unlock()
}

// update runs f under the lock, for the rarer counters.
func (p *published) update(f func(p *published)) {
	p.mu.Lock()
	f(p)
	p.mu.Unlock()
}

// snapshot copies everything out at now.
func (p *published) snapshot(now time.Time) Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := Stats{
		State: p.state, LastSyncResourceVersion: p.lastRV,
		Lists: p.lists, ListRequests: p.listRequests, WatchListSyncs: p.watchListSyncs,
		Relists: p.relists, Watches: p.watches, Resyncs: p.resyncs,
		Backoffs: p.backoffs, LastBackoff: p.lastBackoff,
		Events: make(map[watch.EventType]int64, len(eventTypes)),
		Errors: make(map[Kind]int64),
		TimeIn: make(map[State]time.Duration),
	}
	for i, n := range p.events {
		s.Events[eventTypes[i]] = n
	}
	for k, n := range p.errors {
		if n > 0 {
			s.Errors[Kind(k)] = n
		}
	}
	for st, d := range p.timeIn {
		if d > 0 {
			s.TimeIn[State(st)] = d
		}
	}
	if !p.enteredAt.IsZero() {
		s.TimeIn[p.state] += now.Sub(p.enteredAt)
	}
	return s
}
