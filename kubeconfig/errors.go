package kubeconfig

import (
	"errors"
	"fmt"
)

// Sentinel errors of the package, all in one place.
var (
	// ErrUnsupported is wrapped by every *UnsupportedError: a kubeconfig asks
	// for a feature this package deliberately does not implement (auth
	// providers, basic auth, impersonation, interactive exec plugins).
	ErrUnsupported = errors.New("kubeconfig: unsupported kubeconfig feature")

	// ErrNoConfig means LoadingRules found no kubeconfig and the process
	// does not run in a pod: there is nothing to connect to.
	ErrNoConfig = errors.New("kubeconfig: no configuration found")

	// ErrNotInCluster means InCluster was used outside a pod
	// (KUBERNETES_SERVICE_HOST or KUBERNETES_SERVICE_PORT is unset).
	ErrNotInCluster = errors.New("kubeconfig: not running in a Kubernetes pod")
)

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
	return fmt.Sprintf("kubeconfig: kubeconfig %s: %s (%s) is not supported", e.Path, e.Field, e.Feature)
}

// Unwrap lets errors.Is(err, ErrUnsupported) match.
func (e *UnsupportedError) Unwrap() error { return ErrUnsupported }
