package rest

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer/internal/boundedfile"
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
	ErrInvalidConfig = errors.New("rest: invalid config")

	// ErrExecPlugin is wrapped by every *ExecError: an exec credential
	// plugin failed, hung, or printed no usable credential.
	ErrExecPlugin = errors.New("rest: exec credential plugin failed")

	// ErrObjectTooLarge means a non-watch response body (a list page is one
	// object) was longer than Config.MaxObjectBytes.
	ErrObjectTooLarge = errors.New("rest: response object too large")

	// ErrRedirect is wrapped by every *RedirectError: the server answered a
	// list or watch with a redirect, which this package does not follow.
	ErrRedirect = errors.New("rest: redirect refused")

	// ErrResponseHeaderTimeout means a list or watch got no response
	// headers within Config.ResponseHeaderTimeout. The request was
	// abandoned; the error also wraps the transport's own (a *url.Error),
	// so a reflector files it as a network failure and retries.
	ErrResponseHeaderTimeout = errors.New("rest: no response headers in time")

	// ErrUnsupportedMediaType means the server answered with a Content-Type
	// this package cannot decode (it decodes JSON and Kubernetes protobuf).
	ErrUnsupportedMediaType = errors.New("rest: unsupported response media type")
)

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
	return fmt.Sprintf("rest: %s %s: server redirected (%d) to %q; redirects are not followed", e.Verb, e.Resource, e.Code, e.Location)
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
// `rest: invalid config: Host: is required`.
func (e *ConfigError) Error() string {
	return fmt.Sprintf("rest: invalid config: %s: %s", e.Field, e.Reason)
}

// Unwrap lets errors.Is(err, ErrInvalidConfig) match.
func (e *ConfigError) Unwrap() error { return ErrInvalidConfig }

// FileError reports a file named by a Config (or a kubeconfig) that was
// refused: not a regular file, or longer than MaxFileBytes. It wraps
// ErrFileRefused. Errors of the file system itself (fs.ErrNotExist,
// fs.ErrPermission) are not FileErrors.
type FileError = boundedfile.FileError

// ErrFileRefused is wrapped by every *FileError.
var ErrFileRefused = boundedfile.ErrFileRefused

// MaxFileBytes bounds every file a Config or a kubeconfig names.
const MaxFileBytes = boundedfile.MaxFileBytes
