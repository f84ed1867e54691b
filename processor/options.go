package processor

import (
	"fmt"
	"log"
	"time"
)

// MinResyncPeriod is the shortest resync period a handler can have. A resync
// re-delivers every cached object to the handler; doing that more than once a
// second is never what a controller wants and would swamp the handler, so
// smaller positive periods are raised to this value.
const MinResyncPeriod = time.Second

// Options configures a Processor. The zero value is ready to use.
type Options struct {
	// OnError receives the errors the processor cannot return to a caller:
	// a *HandlerPanicError when a handler panics. It is called from handler
	// goroutines, possibly concurrently, so it must be safe for concurrent
	// use; it must not panic. Nil means: log with the standard log package.
	OnError func(error)
	// Now is the clock used for resync schedules and handling durations.
	// Tests inject a fake clock to make them deterministic. Nil means
	// time.Now.
	Now func() time.Time
}

// withDefaults fills the nil fields, so that the rest of the package never
// checks for nil.
func (o Options) withDefaults() Options {
	if o.OnError == nil {
		o.OnError = func(err error) { log.Print(err) }
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// HandlerOptions configures one registration. The zero value is ready to use.
type HandlerOptions struct {
	// Name identifies the handler in stats and error reports. Empty means
	// "handler-N", N being the registration's sequence number.
	Name string
	// ResyncPeriod is how often the handler wants every cached object
	// re-delivered as an Update with Old == Object, to repair anything it may
	// have missed. Zero means never. Positive values below MinResyncPeriod
	// are raised to MinResyncPeriod; negative values are rejected with
	// ErrNegativeResyncPeriod.
	ResyncPeriod time.Duration
}

// normalizedResync applies the rules documented on HandlerOptions.ResyncPeriod.
func normalizedResync(d time.Duration) (time.Duration, error) {
	switch {
	case d < 0:
		return 0, fmt.Errorf("%w: %v", ErrNegativeResyncPeriod, d)
	case d > 0 && d < MinResyncPeriod:
		return MinResyncPeriod, nil
	default:
		return d, nil
	}
}
