package wire

import (
	"errors"
	"fmt"

	"github.com/seed31a95821/informer/reflector"
)

// Sentinel errors of the package, all in one place. Every error this package
// returns either wraps one of these (test with errors.Is), is a Kubernetes
// API error (test with k8s.io/apimachinery/pkg/api/errors helpers such as
// IsResourceExpired, IsGone or IsTooManyRequests), or wraps the transport's
// own error (test with errors.As for *net.OpError, or errors.Is for
// syscall.ECONNREFUSED). The one exception is a request that cannot be
// built at all, which a Config that passed validation rules out.
var (
	// ErrUnknownKind means New could not find the Go type to decode a
	// resource into: the scheme does not know the kind behind the GVR.
	ErrUnknownKind = errors.New("wire: kind not known to the scheme")

	// ErrFrameTooLarge means a watch frame announced or reached more bytes
	// than Config.MaxFrameBytes. The watch ends: there is no safe way to skip
	// a frame whose end we refuse to look for.
	ErrFrameTooLarge = errors.New("wire: watch frame too large")

	// ErrMalformedFrame means a watch frame could not be decoded: bad JSON,
	// a broken protobuf envelope, an unknown event type, or a field of the
	// wrong type. The watch ends: after a syntax error the stream position is
	// unknown, so no later frame can be trusted. It wraps
	// reflector.ErrDecode, so the reflector files it as KindDecode whatever
	// the encoding.
	ErrMalformedFrame error = malformed("wire: malformed watch frame")

	// ErrTruncatedFrame means the stream ended in the middle of a frame (the
	// connection closed or was reset). No event is delivered for the partial
	// frame. It is a network failure, not a normal close: its Cause is
	// io.ErrUnexpectedEOF or the transport error, so the reflector files
	// it as KindNetwork and backs off before watching again.
	ErrTruncatedFrame = errors.New("wire: watch stream ended inside a frame")

	// ErrMalformedObject means a non-watch response body (a list page, one
	// object) could not be decoded: bad JSON, a broken protobuf envelope or
	// message, or items of the wrong shape. The decoder's own error (a
	// *json.SyntaxError, for example) is wrapped as well. It wraps
	// reflector.ErrDecode, so the reflector files it as KindDecode whatever
	// the encoding: a protobuf body that does not decode is the same
	// failure as a JSON one.
	ErrMalformedObject error = malformed("wire: malformed response object")

	// ErrTooManyItems means a list page held more items than
	// ListerWatcher.ListAtMost was allowed to decode. The page was counted
	// in its raw bytes and refused before any item was built. It has a
	// TooManyItems method, by which the reflector recognises it and files
	// it under reflector.ErrListTooLarge (KindDecode).
	ErrTooManyItems error = tooManyItemsError{}

	// ErrUnexpectedKind means a list response decoded to a different kind
	// than the one requested (for example a ConfigMapList for pods).
	ErrUnexpectedKind = errors.New("wire: response has an unexpected kind")
)

// malformed is the type of the sentinels for a response that does not
// decode: each is its own value, and all of them are reflector.ErrDecode,
// the one name the reflector's taxonomy has for that failure (KindDecode).
type malformed string

func (e malformed) Error() string { return string(e) }

// Unwrap files the failure under the reflector's taxonomy.
func (malformed) Unwrap() error { return reflector.ErrDecode }

// tooManyItemsError is the type of ErrTooManyItems: a sentinel with the
// TooManyItems method, the mark the reflector looks for in any
// ListerWatcher's refusal (see reflector/capabilities.go), which need not
// import the reflector to carry it.
type tooManyItemsError struct{}

func (tooManyItemsError) Error() string { return "wire: too many items in a list page" }

// TooManyItems marks the refusal for the reflector.
func (tooManyItemsError) TooManyItems() bool { return true }

// FrameError describes why a watch stream could not be decoded further.
// Kind is one of ErrFrameTooLarge, ErrMalformedFrame or ErrTruncatedFrame;
// Cause, when set, is the underlying decoder or reader error. Both are
// reachable with errors.Is / errors.As.
type FrameError struct {
	Kind   error // one of the Err*Frame sentinels
	Offset int64 // byte offset in the stream where the bad frame starts
	Size   int64 // announced or observed frame size in bytes, when known
	Cause  error // underlying error, may be nil
}

// Error gives the kind of failure, where in the stream it happened, the
// frame's size when known, and the cause when there is one.
func (e *FrameError) Error() string {
	msg := fmt.Sprintf("%v at stream offset %d", e.Kind, e.Offset)
	if e.Size > 0 {
		msg += fmt.Sprintf(" (frame size %d)", e.Size)
	}
	if e.Cause != nil {
		msg += ": " + e.Cause.Error()
	}
	return msg
}

// Unwrap exposes both the sentinel and the cause to errors.Is / errors.As.
func (e *FrameError) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Cause}
}
