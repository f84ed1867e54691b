package processor

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
)

// The errors this package returns or reports. AddHandler returns the sentinel
// errors (test them with errors.Is); the typed errors are reported through
// Options.OnError (test them with errors.As).
var (
	// ErrStopped is returned by AddHandler once Run has returned or its
	// context is done: no goroutine would ever deliver to the new handler.
	ErrStopped = errors.New("processor: stopped")
	// ErrNilHandler is returned by AddHandler when the handler is nil (or a
	// nil HandlerFunc), which would otherwise panic later on the handler's
	// own goroutine.
	ErrNilHandler = errors.New("processor: nil handler")
	// ErrNegativeResyncPeriod is returned by AddHandler for a negative
	// HandlerOptions.ResyncPeriod. Zero means "never"; positive values below
	// MinResyncPeriod are raised to it rather than rejected.
	ErrNegativeResyncPeriod = errors.New("processor: negative resync period")
	// ErrNegativeBacklogLimit is returned by AddHandler for a negative
	// HandlerOptions.BacklogLimit. Zero means DefaultBacklogLimit; a
	// handler that wants no bound says so with KeepAllUpdates.
	ErrNegativeBacklogLimit = errors.New("processor: negative backlog limit")
)

// HandlerPanicError reports that a handler panicked. The processor recovers
// the panic, reports this error through Options.OnError and carries on with
// the handler's next notification: one bad object must not take down the
// process nor stall the handler (or its HasSynced) forever.
type HandlerPanicError struct {
	// Handler is the registration's name (HandlerOptions.Name).
	Handler string
	// Type and Key identify the notification the handler was given.
	Type EventType
	Key  string
	// Value is what the handler passed to panic.
	Value any
	// Stack is the panicking goroutine's stack, captured during recovery so
	// that it still shows the line that panicked.
	Stack []byte
}

// Error describes the panic in one line; the stack is left to those who ask.
func (e *HandlerPanicError) Error() string {
	return fmt.Sprintf("processor: handler %q panicked on %s %q: %v", e.Handler, e.Type, e.Key, e.Value)
}

// Unwrap returns the panic value when it is an error, so that errors.Is and
// errors.As see through the panic (for example a panic(io.EOF)).
func (e *HandlerPanicError) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}

// Attrs returns what the error names, as structured log keys: error_kind
// "HandlerPanic", handler, and namespace and name split from Key (a
// cluster-scoped key has no namespace).
func (e *HandlerPanicError) Attrs() []slog.Attr {
	attrs := []slog.Attr{slog.String("error_kind", "HandlerPanic"), slog.String("handler", e.Handler)}
	if ns, name, ok := strings.Cut(e.Key, "/"); ok {
		return append(attrs, slog.String("namespace", ns), slog.String("name", name))
	}
	return append(attrs, slog.String("name", e.Key))
}
