package client

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The client's sentinel errors. Errors from the API server are
// *apierrors.StatusError, for apierrors.IsConflict, IsNotFound and friends;
// the errors below are the ones the client decides itself.
var (
	// ErrUnknownType is wrapped when T is not registered in the client's
	// scheme: the client cannot tell which resource to write. It is
	// informer.ErrUnknownType, so one errors.Is covers reads and writes.
	ErrUnknownType = errUnknownType
	// ErrUnserved is wrapped by *UnservedError: the server answered 404 for
	// the resource itself, not for one object of it.
	ErrUnserved = errors.New("client: resource not served by the API server")
	// ErrMalformedResponse means a 2xx response body could not be decoded
	// into the expected type, or exceeded the size limit.
	ErrMalformedResponse = errors.New("client: malformed response")
	// ErrInvalidObject means an object handed to the client lacks what the
	// request needs (a name, or a namespace for a namespaced resource).
	ErrInvalidObject = errors.New("client: invalid object")
)

// UnservedError reports a request to a resource the server does not serve:
// a CRD not installed, a group or version it does not know. Retrying does
// not help. It wraps ErrUnserved and the server's NotFound error, so
// apierrors.IsNotFound is true as well.
type UnservedError struct {
	Resource schema.GroupVersionResource
	Err      error // the server's *apierrors.StatusError
}

// Error names the resource.
func (e *UnservedError) Error() string {
	return fmt.Sprintf("client: %s is not served by the API server: %v", e.Resource, e.Err)
}

// Unwrap exposes ErrUnserved and the server's error.
func (e *UnservedError) Unwrap() []error { return []error{ErrUnserved, e.Err} }
