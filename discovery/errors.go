package discovery

import "errors"

// Sentinel errors of the package. Besides these, a kind or a resource the
// server does not serve is reported with apimachinery's own errors
// (*meta.NoKindMatchError, *meta.NoResourceMatchError: test with
// meta.IsNoMatchError).
var (
	// ErrUnreachable wraps every failure to read the discovery documents:
	// a network error, a server that answers /api or /apis with an error
	// (a server with no discovery at all answers 404), a document too large
	// or malformed. Resolver falls back to apiresource.Guess on it, and on
	// it alone.
	ErrUnreachable = errors.New("discovery: the server's discovery documents cannot be read")
)
