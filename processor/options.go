package processor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
	// use; it must not panic. Nil means: log to Logger.
	OnError func(error)
	// Logger receives the errors when OnError is nil, with the keys
	// handler, namespace, name and error_kind. Nil means slog.Default().
	Logger *slog.Logger
}

// withDefaults fills the nil fields, so that the rest of the package never
// checks for nil.
func (o Options) withDefaults() Options {
	if o.OnError == nil {
		logger := o.Logger
		if logger == nil {
			logger = slog.Default()
		}
		o.OnError = func(err error) { logError(logger, err) }
	}
	return o
}

// logError is the default OnError.
func logError(logger *slog.Logger, err error) {
	attrs := []slog.Attr{slog.Any("error", err)}
	if pe, ok := errors.AsType[*HandlerPanicError](err); ok {
		attrs = append(attrs, pe.Attrs()...)
	}
	logger.LogAttrs(context.Background(), slog.LevelError, "processor error", attrs...)
}

// HandlerOptions configures one registration. The zero value is ready to use.
//
// Its doc comments are where the rules of these fields live. A user of an
// informer does not set this type: informer.HandlerOptions, given to
// AddEventHandler, carries the same fields (plus an UpdateFilter the
// informer applies itself) and is copied into this one. Set it directly
// only when driving a Processor without an informer.
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
	// BacklogLimit is how many notifications the handler may have pending
	// before its backlog coalesces by key: past it, a key that changes
	// again while it waits keeps one notification, from the oldest version
	// the handler has not been told about to the newest (see the package
	// documentation for what the handler may then see). Zero means
	// DefaultBacklogLimit; negative values are rejected with
	// ErrNegativeBacklogLimit. It is checked once per journal page, so the
	// backlog may pass it by up to 128 notifications before it coalesces.
	BacklogLimit int
	// KeepAllUpdates turns the bound off: the handler is told about every
	// notification, however far behind it falls, and its backlog grows
	// with the number of events instead of the number of keys. It is for
	// handlers that must see every version (an audit log, a counter of
	// transitions); BacklogLimit is then ignored.
	KeepAllUpdates bool
}

// backlogLimit applies the rules documented on HandlerOptions.BacklogLimit
// and KeepAllUpdates: 0 in the result means unbounded.
func (o HandlerOptions) backlogLimit() (int, error) {
	switch {
	case o.KeepAllUpdates:
		return 0, nil
	case o.BacklogLimit < 0:
		return 0, fmt.Errorf("%w: %d", ErrNegativeBacklogLimit, o.BacklogLimit)
	case o.BacklogLimit == 0:
		return DefaultBacklogLimit, nil
	default:
		return o.BacklogLimit, nil
	}
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
