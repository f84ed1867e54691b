package reflector

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

// State names what the reflector is doing, for readers on other goroutines
// (Reflector.State, Stats). The machine itself steers by richer state
// values, each carrying its own data (unexported, below in this file);
// State is their public name.
type State int

const (
	// StateIdle: Run has not been called yet.
	StateIdle State = iota
	// StateListing: getting the first complete snapshot, by WatchList or by
	// a paged List, to Store.Replace it.
	StateListing
	// StateRelisting: getting a new snapshot after the first, because the
	// watch could not go on from where it was (what causes a relist is the
	// transition table's, in transitions.go). Same work as Listing; counted
	// apart because relists are the expensive event a healthy reflector
	// keeps rare.
	StateRelisting
	// StateWatching: applying a watch's events to the store, resuming from
	// the last resourceVersion whenever the watch ends.
	StateWatching
	// StateBackingOff: waiting before a retry.
	StateBackingOff
	// StateStopped: Run has returned.
	StateStopped

	numStates = iota
)

var stateNames = [numStates]string{
	"Idle", "Listing", "Relisting", "Watching", "BackingOff", "Stopped",
}

// String returns the state's name.
func (s State) String() string {
	if s < 0 || int(s) >= numStates {
		return fmt.Sprintf("State(%d)", int(s))
	}
	return stateNames[s]
}

// state is one state of the machine with the data that state needs, and
// nothing else: the closed set idle, listing, watching, backingOff and
// stopped (the unexported method keeps it closed). A state value is also the I/O
// the outer loop performs next: listing lists, watching watches, backingOff
// waits (see Reflector.perform).
type state interface {
	public() State
}

// listing gets a complete snapshot into the store.
type listing struct {
	// rv is the resourceVersion the store has reached ("" before the first
	// snapshot): a relist asks for a snapshot at least that fresh.
	rv string
	// consistent: rv proved unusable (410, or too large); read at "".
	consistent bool
	// relist: a snapshot after the first (public name Relisting).
	relist bool
	// via is how this attempt lists.
	via listVia
}

// listVia is how a listing attempt gets its snapshot.
type listVia int

const (
	// viaAny: WatchList if the reflector wants it, else a paged List.
	viaAny listVia = iota
	// viaPaged: a paged List now, because a WatchList just failed in a way
	// a List would not.
	viaPaged
	// viaUnpaged: one unpaged List now, because a continue token expired
	// between the pages of the last attempt (which therefore came in pages).
	viaUnpaged
)

// watching applies a watch's events to the store.
type watching struct {
	// rv is where the store is: the watch starts from it, and every event
	// that carries progress moves it.
	rv string
	// stream is the open watch to read, nil to open one from rv. WatchList
	// hands its stream over, still open, after the initial-events-end
	// bookmark.
	stream watch.Interface
	// replaying: the stream began at "" or "0", so its first events are
	// synthetic ADDED ones for the current state in no RV order, whose
	// resourceVersions are no progress (see replaysState). Cleared by the
	// first event of another type.
	replaying bool
}

// idle is a machine no Run has started yet.
type idle struct{}

// backingOff waits before it enters then.
type backingOff struct {
	then  state         // the state the wait leads to (never a backingOff)
	delay time.Duration // how long to wait
}

// stopped is where Run leaves the machine.
type stopped struct {
	// resume is where a later Run picks up: the state the machine was in,
	// or waiting to enter, when its context ended.
	resume state
}

func (s listing) public() State {
	if s.relist {
		return StateRelisting
	}
	return StateListing
}

func (idle) public() State       { return StateIdle }
func (watching) public() State   { return StateWatching }
func (backingOff) public() State { return StateBackingOff }
func (stopped) public() State    { return StateStopped }

// heading is the state s is in, or for a wait, the state it leads to, or
// for a stop, the state a later Run resumes.
func heading(s state) state {
	switch s := s.(type) {
	case backingOff:
		return s.then
	case stopped:
		return s.resume
	}
	return s
}

// input is what the I/O of one state came to, or what Run was asked: the
// machine's input, which step turns into the next state. Like state, it is
// a closed set of types (the unexported method keeps it closed), one for
// each thing that can happen, each carrying what the transition table
// reads of it and nothing else.
type input interface {
	on() inputKind
}

// inputKind names an input's type, for the table's rows to match on.
type inputKind int

const (
	onRunStarted inputKind = iota
	onSnapshotStored
	onListFailed
	onWatchListFailed
	onWatchFailed
	onStoreFailed
	onWatchClosed
	onWaitOver
	onCtxDone
)

// runStarted: Run was called, in Idle or Stopped.
type runStarted struct{}

// snapshotStored: a complete snapshot is in the store.
type snapshotStored struct {
	rv string // the snapshot's resourceVersion
	// paged: a List at "0" came in more than one page (see pageLimit).
	paged bool
	// stream: the watch a WatchList hands over, still open.
	stream watch.Interface
}

// fault is what every failure carries: what the table and the backoff
// read of it. The failure was reported (to OnError) when it happened.
type fault struct {
	kind Kind  // the failure's class, as reported
	err  error // the failure: for Retry-After and WatchList refusals
	// waitLeft: for a failure during a wait, what was left of the wait; the
	// next wait is no shorter.
	waitLeft time.Duration
	// now is when it happened: time is an input, for the backoff's reset.
	now time.Time
}

// faultOf returns the failure an input carries, if it is one.
func faultOf(in input) (fault, bool) {
	switch in := in.(type) {
	case listFailed:
		return in.fault, true
	case watchListFailed:
		return in.fault, true
	case watchFailed:
		return in.fault, true
	case storeFailed:
		return in.fault, true
	}
	return fault{}, false
}

// listFailed: a paged or unpaged List failed.
type listFailed struct {
	fault
	rv        string // the resourceVersion it asked for
	laterPage bool   // it failed on a page after the first
}

// watchListFailed: a WatchList failed before its snapshot was stored.
type watchListFailed struct{ fault }

// watchFailed: a watch could not be opened, or ended in a failure.
type watchFailed struct{ fault }

// storeFailed: the store refused a snapshot (Replace), or failed a resync.
type storeFailed struct{ fault }

// watchClosed: a watch ended normally (the server's timeout ran out).
type watchClosed struct{}

// waitOver: a backoff's delay is over.
type waitOver struct{}

// ctxDone: Run's context is done.
type ctxDone struct{}

func (runStarted) on() inputKind      { return onRunStarted }
func (snapshotStored) on() inputKind  { return onSnapshotStored }
func (listFailed) on() inputKind      { return onListFailed }
func (watchListFailed) on() inputKind { return onWatchListFailed }
func (watchFailed) on() inputKind     { return onWatchFailed }
func (storeFailed) on() inputKind     { return onStoreFailed }
func (watchClosed) on() inputKind     { return onWatchClosed }
func (waitOver) on() inputKind        { return onWaitOver }
func (ctxDone) on() inputKind         { return onCtxDone }
