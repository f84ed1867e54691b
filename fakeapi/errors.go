package fakeapi

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Errors of the Go API.
//
// Create, Update and Delete report API-level failures exactly as the HTTP
// layer does, as *apierrors.StatusError values (test them with
// apierrors.IsNotFound, IsAlreadyExists, IsConflict, IsInvalid). The sentinel
// below covers the one failure that has no HTTP equivalent.
var (
	// ErrNotServed means the object's Go type is not one of the server's
	// resources: it is missing from the scheme or from Options.Resources.
	ErrNotServed = errors.New("fakeapi: type is not a served resource")
)

// Wire errors whose exact shape clients depend on. Each mirrors what a real
// kube-apiserver sends, because client-go's reflector decides between
// "retry", "relist" and "give up" by looking at code, reason and causes.

// tooLargeResourceVersion is the answer to a read at a resourceVersion the
// server has not reached yet. A real server waits up to three seconds for
// its watch cache to catch up, then answers 504 Timeout with the
// ResourceVersionTooLarge cause; client-go's reflector recognises the cause
// and relists from scratch. Our store is never behind, so we answer at once.
func tooLargeResourceVersion(requested, current uint64) *apierrors.StatusError {
	err := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", requested, current), 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{
		Type:    metav1.CauseTypeResourceVersionTooLarge,
		Message: "Too large resource version",
	}}
	return err
}

// watchTooOld is sent (as an ERROR event) to a watch that starts before the
// compacted history, in the words of the real watch cache.
func watchTooOld(requested, oldest uint64) *apierrors.StatusError {
	return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", requested, oldest))
}

// listTooOld answers an exact-resourceVersion list of compacted history.
func listTooOld() *apierrors.StatusError {
	return apierrors.NewResourceExpired("The resourceVersion for the provided list is too old.")
}

// continueTooOld answers a continue token whose snapshot was compacted. Like
// etcd-backed servers it carries a fresh token (resourceVersion -1) that lets
// the client finish the list inconsistently, at the latest state.
func continueTooOld(freshToken string) *apierrors.StatusError {
	err := apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result. " +
		"You can start a new list without the continue parameter, or use the continue token in this response to " +
		"retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - " +
		"objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.")
	err.ErrStatus.ListMeta.Continue = freshToken
	return err
}

// conflict is the optimistic-concurrency failure of an update or delete
// whose resourceVersion (or UID) precondition no longer holds.
func conflict(gr schema.GroupResource, name string) *apierrors.StatusError {
	return apierrors.NewConflict(gr, name, errors.New("the object has been modified; please apply your changes to the latest version and try again"))
}

// notFoundPath is the 404 for a URL that names no resource at all.
func notFoundPath() *apierrors.StatusError {
	err := apierrors.NewNotFound(schema.GroupResource{}, "")
	err.ErrStatus.Message = "the server could not find the requested resource"
	err.ErrStatus.Details = &metav1.StatusDetails{}
	return err
}

// errNoRoute is the answer to a path outside every served API group: the
// real server's mux answers it in plain text, "404 page not found", not
// with a Status (writeError sends it so).
var errNoRoute = errors.New("404 page not found")

// notFoundText writes the plain-text 404 of a path no API group serves.
func notFoundText(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusNotFound)
	_, _ = io.WriteString(w, "404 page not found\n")
}

// methodNotAllowed is the real server's 405 for a method a path does not
// take (POST across all namespaces, DELETE of the namespaces collection):
// its router's answer, with empty details.
func methodNotAllowed() *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusMethodNotAllowed, Reason: metav1.StatusReasonMethodNotAllowed,
		Message: "the server does not allow this method on the requested resource", Details: &metav1.StatusDetails{},
	}}
}
