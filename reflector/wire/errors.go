package wire

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	// ErrInvalidConfig is wrapped by every *ConfigError: a Config field is
	// missing, malformed or contradicts another field.
	ErrInvalidConfig = errors.New("wire: invalid config")

	// ErrUnsupported is wrapped by every *UnsupportedError: a kubeconfig asks
	// for a feature this package deliberately does not implement (auth
	// providers, basic auth, impersonation, interactive exec plugins).
	ErrUnsupported = errors.New("wire: unsupported kubeconfig feature")

	// ErrNoConfig means LoadingRules found no kubeconfig and the process
	// does not run in a pod: there is nothing to connect to.
	ErrNoConfig = errors.New("wire: no configuration found")

	// ErrNotInCluster means InCluster was used outside a pod
	// (KUBERNETES_SERVICE_HOST or KUBERNETES_SERVICE_PORT is unset).
	ErrNotInCluster = errors.New("wire: not running in a Kubernetes pod")

	// ErrExecPlugin is wrapped by every *ExecError: an exec credential
	// plugin failed, hung, or printed no usable credential.
	ErrExecPlugin = errors.New("wire: exec credential plugin failed")

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

	// ErrObjectTooLarge means a non-watch response body (a list page is one
	// object) was longer than Config.MaxObjectBytes.
	ErrObjectTooLarge = errors.New("wire: response object too large")

	// ErrTooManyItems means a list page held more items than
	// ListerWatcher.ListAtMost was allowed to decode. The page was counted
	// in its raw bytes and refused before any item was built. It has a
	// TooManyItems method, by which the reflector recognises it and files
	// it under reflector.ErrListTooLarge (KindDecode).
	ErrTooManyItems error = tooManyItemsError{}

	// ErrUnexpectedKind means a list response decoded to a different kind
	// than the one requested (for example a ConfigMapList for pods).
	ErrUnexpectedKind = errors.New("wire: response has an unexpected kind")

	// ErrRedirect is wrapped by every *RedirectError: the server answered a
	// list or watch with a redirect, which this package does not follow.
	ErrRedirect = errors.New("wire: redirect refused")

	// ErrResponseHeaderTimeout means a list or watch got no response
	// headers within Config.ResponseHeaderTimeout. The request was
	// abandoned; the error also wraps the transport's own (a *url.Error),
	// so a reflector files it as a network failure and retries.
	ErrResponseHeaderTimeout = errors.New("wire: no response headers in time")

	// ErrFileRefused is wrapped by every *FileError: a file named by a
	// Config or a kubeconfig is not a regular file, or is longer than
	// MaxFileBytes.
	ErrFileRefused = errors.New("wire: file refused")

	// ErrUnsupportedMediaType means the server answered with a Content-Type
	// this package cannot decode (it decodes JSON and Kubernetes protobuf).
	ErrUnsupportedMediaType = errors.New("wire: unsupported response media type")
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

// RedirectError reports a 3xx answer to a list or watch. The list/watch API
// never redirects; a redirect comes from a misconfigured Host (http where
// https is served), a proxy's login page, or a hostile server, and
// following it would send the bearer token to wherever it points (another
// port, another host, https turned into http). So it is not followed, and
// the request fails with this error, which names the Location. It wraps
// ErrRedirect; as an APIStatus (code 3xx) a reflector classifies it as a
// rejection, and backs off.
type RedirectError struct {
	Verb     string // "list" or "watch"
	Resource string // for example "pods"
	Code     int    // the HTTP status, 301 to 308
	Location string // the Location header, with any token redacted
}

// Error names the request, the code and where it pointed.
func (e *RedirectError) Error() string {
	return fmt.Sprintf("wire: %s %s: server redirected (%d) to %q; redirects are not followed", e.Verb, e.Resource, e.Code, e.Location)
}

// Unwrap lets errors.Is(err, ErrRedirect) match.
func (e *RedirectError) Unwrap() error { return ErrRedirect }

// Status describes the redirect as a Status, so that apimachinery's
// helpers and a reflector's classification see its HTTP code.
func (e *RedirectError) Status() metav1.Status {
	return metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    int32(e.Code),
		Reason:  metav1.StatusReasonUnknown,
		Message: e.Error(),
	}
}

// ConfigError reports one invalid Config field. It wraps ErrInvalidConfig.
type ConfigError struct {
	Field  string // the Config field at fault, for example "CertFile"
	Reason string // what is wrong with it
}

// Error names the field and the reason, as in
// `wire: invalid config: Host: is required`.
func (e *ConfigError) Error() string {
	return fmt.Sprintf("wire: invalid config: %s: %s", e.Field, e.Reason)
}

// Unwrap lets errors.Is(err, ErrInvalidConfig) match.
func (e *ConfigError) Unwrap() error { return ErrInvalidConfig }

// UnsupportedError reports a kubeconfig feature this package does not
// implement. It wraps ErrUnsupported.
type UnsupportedError struct {
	Path    string // kubeconfig file
	Field   string // for example `users["alice"].user.exec`
	Feature string // short human name, for example "exec credential plugin"
}

// Error names the file, the field and the feature, so that the user knows
// which line of which kubeconfig to change.
func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("wire: kubeconfig %s: %s (%s) is not supported", e.Path, e.Field, e.Feature)
}

// Unwrap lets errors.Is(err, ErrUnsupported) match.
func (e *UnsupportedError) Unwrap() error { return ErrUnsupported }

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

// FileError reports a file this package refused to read: one that is not
// a regular file (a directory, a device such as /dev/zero, a FIFO, a
// socket) or that is longer than MaxFileBytes. A kubeconfig and the files
// it names are input like any other, and a file of gigabytes would be
// read whole. It wraps ErrFileRefused. Errors of the file system itself
// (fs.ErrNotExist, fs.ErrPermission) are not FileErrors.
type FileError struct {
	Path   string // the file, as named
	Reason string // for example "is not a regular file (d---------)", for a directory
}

// Error names the file and why it was refused.
func (e *FileError) Error() string {
	return fmt.Sprintf("wire: refusing to read %s: it %s", e.Path, e.Reason)
}

// Unwrap lets errors.Is(err, ErrFileRefused) match.
func (e *FileError) Unwrap() error { return ErrFileRefused }
