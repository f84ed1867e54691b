package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/seed31a95821/informer/reflector"
)

// The monitor samples the informers and handlers a few times a second and
// keeps what both views show: the current figures, a timeline of what the
// reflectors did, and a short history for the charts. The terminal prints
// from it once a second; the web page polls it.

const (
	sampleEvery   = 50 * time.Millisecond // short enough to see most backoffs as a state
	chartEvery    = 500 * time.Millisecond
	chartPoints   = 240 // two minutes of chart
	timelineLimit = 300
	rateWindow    = time.Second // events/s is measured over the last second
)

// snapshot is everything a view shows at one moment. Field names are the
// JSON the page reads.
type snapshot struct {
	Elapsed      float64         `json:"elapsed"` // seconds since start
	Server       string          `json:"server"`
	ServerRV     uint64          `json:"serverRV,omitempty"` // 0 for a real cluster
	Faults       bool            `json:"faults"`             // the fault buttons work (embedded server)
	Synced       bool            `json:"synced"`
	Events       int64           `json:"events"`
	EventsPerSec float64         `json:"eventsPerSec"`
	Tombstones   int64           `json:"tombstones"`
	Informers    []informerView  `json:"informers"`
	Handlers     []handlerView   `json:"handlers"`
	Timeline     []timelineEntry `json:"timeline"`
	Chart        chart           `json:"chart"`
}

type informerView struct {
	Name       string           `json:"name"`
	State      string           `json:"state"`
	RV         string           `json:"rv"`
	Cached     int              `json:"cached"`
	QueueDepth int              `json:"queueDepth"`
	Watches    int64            `json:"watches"`
	Relists    int64            `json:"relists"`
	Backoffs   int64            `json:"backoffs"`
	Errors     map[string]int64 `json:"errors"`
}

type handlerView struct {
	Name       string  `json:"name"`
	Informer   string  `json:"informer"`
	Pending    int     `json:"pending"`
	MaxPending int     `json:"maxPending"`
	Handled    int64   `json:"handled"`
	MeanMicros float64 `json:"meanMicros"`
	// CaughtUpAfter is when the handler first had nothing pending after
	// the caches synced, in seconds since start; -1 until it has.
	CaughtUpAfter float64 `json:"caughtUpAfter"`
}

// timelineEntry is one thing that happened: a state transition, a relist,
// an error, a fault pressed.
type timelineEntry struct {
	T    float64 `json:"t"`
	Who  string  `json:"who"`
	Kind string  `json:"kind"` // state, relist, error, backoff, watch, tombstones, fault
	What string  `json:"what"`
}

// chart is the recent history: one point every chartEvery.
type chart struct {
	T            []float64            `json:"t"`
	EventsPerSec []float64            `json:"eventsPerSec"`
	Lag          map[string][]float64 `json:"lag"` // by handler name
}

type rateSample struct {
	at     time.Time
	events int64
}

type monitor struct {
	d      *dashboard
	server string
	faults bool
	rv     func() uint64 // the server's RV, nil for a real cluster
	start  time.Time

	mu        sync.Mutex // guards everything below
	now       snapshot
	prev      map[string]reflector.Stats // each informer's last sample
	prevTombs int64
	rates     []rateSample // the samples within rateWindow, oldest first
	lastChart time.Time
	timeline  []timelineEntry
	chart     chart
	caughtUp  map[string]float64
}

func newMonitor(d *dashboard, server string, rv func() uint64) *monitor {
	return &monitor{d: d, server: server, faults: rv != nil, rv: rv, start: time.Now(),
		prev: map[string]reflector.Stats{}, caughtUp: map[string]float64{},
		chart: chart{Lag: map[string][]float64{}}}
}

// run samples until ctx is done.
func (m *monitor) run(ctx context.Context) {
	tick := time.NewTicker(sampleEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			m.sample(now)
		}
	}
}

// snapshot returns the latest sample. Its slices are copies, the caller's.
func (m *monitor) snapshot() snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.now
	s.Timeline = append([]timelineEntry(nil), m.timeline...)
	s.Chart = chart{T: append([]float64(nil), m.chart.T...), EventsPerSec: append([]float64(nil), m.chart.EventsPerSec...),
		Lag: map[string][]float64{}}
	for k, v := range m.chart.Lag {
		s.Chart.Lag[k] = append([]float64(nil), v...)
	}
	return s
}

// note adds an entry to the timeline: a fault the user injected, say.
func (m *monitor) note(who, kind, what string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.addLocked(time.Now(), who, kind, what)
}

func (m *monitor) addLocked(at time.Time, who, kind, what string) {
	m.timeline = append(m.timeline, timelineEntry{T: m.since(at), Who: who, Kind: kind, What: what})
	if n := len(m.timeline); n > timelineLimit {
		m.timeline = append(m.timeline[:0:0], m.timeline[n-timelineLimit:]...)
	}
}

func (m *monitor) since(at time.Time) float64 { return at.Sub(m.start).Seconds() }

// sample reads every figure once and records what changed since the last.
func (m *monitor) sample(now time.Time) {
	synced := m.d.pods.HasSynced() && m.d.services.HasSynced()
	s := snapshot{Elapsed: m.since(now), Server: m.server, Faults: m.faults, Synced: synced,
		Events: m.d.events.Load(), Tombstones: m.d.tombstones.Load()}
	if m.rv != nil {
		s.ServerRV = m.rv()
	}
	pods, svcs := m.d.pods.Stats(), m.d.services.Stats()
	s.Informers = []informerView{
		view("pods", pods, m.d.pods.Indexer().Len(), m.d.pods.QueueStats().Depth),
		view("services", svcs, m.d.services.Indexer().Len(), m.d.services.QueueStats().Depth),
	}
	for _, l := range m.d.lanes {
		st := l.reg.Stats()
		s.Handlers = append(s.Handlers, handlerView{Name: st.Name, Informer: l.informer, Pending: st.Pending, MaxPending: st.MaxPending,
			Handled: l.meter.calls.Load(), MeanMicros: float64(l.meter.mean().Nanoseconds()) / 1e3, CaughtUpAfter: -1})
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	m.diffLocked(now, "pods", pods)
	m.diffLocked(now, "services", svcs)
	if d := s.Tombstones - m.prevTombs; d > 0 {
		m.addLocked(now, "handlers", "tombstones", fmt.Sprintf("%d tombstone(s): deletes learned from a relist (finalStateUnknown)", d))
	}
	m.prevTombs = s.Tombstones
	s.EventsPerSec = m.rateLocked(now, s.Events)
	for i := range s.Handlers {
		h := &s.Handlers[i]
		if _, ok := m.caughtUp[h.Name]; !ok && synced && h.Pending == 0 {
			m.caughtUp[h.Name] = s.Elapsed
			m.addLocked(now, h.Name, "handler", fmt.Sprintf("caught up with the initial list (%d handled)", h.Handled))
		}
		if t, ok := m.caughtUp[h.Name]; ok {
			h.CaughtUpAfter = t
		}
	}
	if now.Sub(m.lastChart) >= chartEvery {
		m.lastChart = now
		m.chartLocked(s)
	}
	m.now = s
}

func view(name string, st reflector.Stats, cached, depth int) informerView {
	v := informerView{Name: name, State: st.State.String(), RV: st.LastSyncResourceVersion, Cached: cached,
		QueueDepth: depth, Watches: st.Watches, Relists: st.Relists, Backoffs: st.Backoffs, Errors: map[string]int64{}}
	for k, n := range st.Errors {
		v.Errors[k.String()] = n
	}
	return v
}

// diffLocked puts on the timeline what one informer's reflector did since
// the last sample: state changes, and what its counters say happened in
// between (a backoff shorter than a sample is seen only there).
func (m *monitor) diffLocked(now time.Time, who string, st reflector.Stats) {
	old, seen := m.prev[who]
	m.prev[who] = st
	if !seen {
		m.addLocked(now, who, "state", st.State.String())
		return
	}
	for k, n := range st.Errors {
		if d := n - old.Errors[k]; d > 0 {
			m.addLocked(now, who, "error", fmt.Sprintf("%s ×%d", k, d))
		}
	}
	if st.Backoffs > old.Backoffs {
		m.addLocked(now, who, "backoff", fmt.Sprintf("backing off %v", st.LastBackoff.Round(time.Millisecond)))
	}
	if st.Relists > old.Relists {
		m.addLocked(now, who, "relist", fmt.Sprintf("relist #%d: a new snapshot, then Replace", st.Relists))
	}
	// A relist by WatchList opens a watch too: that one is the relist's.
	relisting := st.State == reflector.StateRelisting || old.State == reflector.StateRelisting
	if st.Watches > old.Watches && old.Watches > 0 && st.Relists == old.Relists && !relisting {
		m.addLocked(now, who, "watch", fmt.Sprintf("watch reopened from RV %s", old.LastSyncResourceVersion))
	}
	m.statesLocked(now, who, old, st)
}

// statesLocked records the state transitions between two samples. A state
// the counters say was visited in between (a backoff of a few milliseconds,
// a quick relist) is recorded too, marked as such, so that the page's state
// bands show every backoff and every relist, however short.
func (m *monitor) statesLocked(now time.Time, who string, old, st reflector.Stats) {
	from := old.State
	visit := func(s reflector.State, note string) {
		m.addLocked(now, who, "state", from.String()+" → "+s.String()+note)
		from = s
	}
	if st.Backoffs > old.Backoffs && old.State != reflector.StateBackingOff && st.State != reflector.StateBackingOff {
		visit(reflector.StateBackingOff, " (between samples)")
	}
	if st.Relists > old.Relists && old.State != reflector.StateRelisting && st.State != reflector.StateRelisting {
		visit(reflector.StateRelisting, " (between samples)")
	}
	if st.State != from {
		visit(st.State, "")
	}
}

// rateLocked returns the events per second over the last rateWindow.
func (m *monitor) rateLocked(now time.Time, events int64) float64 {
	m.rates = append(m.rates, rateSample{now, events})
	for len(m.rates) > 2 && now.Sub(m.rates[1].at) >= rateWindow {
		m.rates = m.rates[1:]
	}
	first := m.rates[0]
	dt := now.Sub(first.at).Seconds()
	if dt <= 0 {
		return 0
	}
	return float64(events-first.events) / dt
}

func (m *monitor) chartLocked(s snapshot) {
	trim := func(v []float64) []float64 {
		if len(v) > chartPoints {
			return v[len(v)-chartPoints:]
		}
		return v
	}
	m.chart.T = trim(append(m.chart.T, s.Elapsed))
	m.chart.EventsPerSec = trim(append(m.chart.EventsPerSec, s.EventsPerSec))
	for _, h := range s.Handlers {
		m.chart.Lag[h.Name] = trim(append(m.chart.Lag[h.Name], float64(h.Pending)))
	}
}
