package reflector

import "fmt"

// State is what the reflector is doing. The reflector is a state machine:
// Run executes the step of the current state, which returns a reaction
// naming the next state. See doc.go for the transition table.
type State int

const (
	// StateIdle: Run has not been called yet.
	StateIdle State = iota
	// StateListing: getting the first complete snapshot, by WatchList or by
	// a paged List, to Store.Replace it.
	StateListing
	// StateRelisting: getting a new snapshot after the watch could not
	// resume (410 Expired, an RV the server has not reached, or a frame it
	// could not decode, which a new watch would meet again). Same work as
	// Listing; counted apart because
	// relists are the expensive event a healthy reflector keeps rare.
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

// reaction is the outcome of one step: where the machine goes next. It is
// plain data so that the decision functions that produce it can be checked
// with table tests.
type reaction struct {
	// next is the state to enter, after a backoff delay when backoff is set.
	next State
	// backoff: wait a backoff delay (at least the server's Retry-After)
	// before entering next.
	backoff bool
	// consistent: the last resourceVersion is unusable (expired, or ahead
	// of the server); the next list must be a consistent read (RV "").
	consistent bool
}

func (rc reaction) String() string {
	s := rc.next.String()
	if rc.backoff {
		s = "backoff then " + s
	}
	if rc.consistent {
		s += " (consistent)"
	}
	return s
}

var stop = reaction{next: StateStopped}
