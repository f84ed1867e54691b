package processor

import "time"

// HandlerStats is a snapshot of one handler's progress: how far behind the
// stream it is and how long it takes per notification. These are the
// per-handler lag figures client-go does not expose.
type HandlerStats struct {
	// Name is the registration's name.
	Name string
	// Pending is the number of notifications distributed to the handler (or
	// waiting in its initial replay) that it has not finished handling.
	Pending int
	// MaxPending is the highest Pending ever observed: the worst backlog.
	MaxPending int
	// Delivered counts the notifications the handler has finished handling,
	// including those during which it panicked.
	Delivered uint64
	// Panics counts the notifications during which the handler panicked.
	Panics uint64
	// LastHandleDuration is how long the latest Handle call took, measured
	// with Options.Now.
	LastHandleDuration time.Duration
	// MaxHandleDuration is the longest Handle call so far.
	MaxHandleDuration time.Duration
	// BufferCapacity is how many notifications the handler's buffer can hold
	// without allocating. It grows during a burst and falls back once the
	// backlog is drained.
	BufferCapacity int
}
