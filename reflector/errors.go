package reflector

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// This file is the one place where the reflector's errors are documented.
//
// Everything that goes wrong is reported as an *Error through
// Options.OnError and counted in Stats().Errors. An *Error carries a Kind,
// the coarse class that decides what the reflector does next, and wraps the
// cause with %w, so callers can still ask the precise question:
// errors.Is(err, ErrListTooLarge), apierrors.IsResourceExpired(err),
// errors.As(err, &netErr). There is one taxonomy, the Kind: each sentinel
// below is a finer name for one Kind, and is classified as that Kind.
//
// Reporting an error never stops the reflector: it keeps retrying until its
// context is cancelled. Only Run's own return value says it could not run.

// Kind is the class of a failure, coarse enough to pick a reaction.
type Kind int

const (
	// KindOther is a failure none of the other kinds describes.
	KindOther Kind = iota
	// KindExpired is HTTP 410: the resourceVersion asked for is older than
	// the server's history (etcd compacted it). The reflector relists.
	KindExpired
	// KindTooLargeRV means the server has not yet reached the
	// resourceVersion asked for (an HA server behind its peers, or etcd
	// restored from a backup). The reflector relists.
	KindTooLargeRV
	// KindThrottled is HTTP 429. The reflector backs off, honouring
	// Retry-After up to ten minutes.
	KindThrottled
	// KindNetwork is a transport failure: connection refused or reset, EOF,
	// timeout. The reflector backs off and resumes from its last
	// resourceVersion: the server most likely still has the history.
	KindNetwork
	// KindServerError is an HTTP 5xx from the server.
	KindServerError
	// KindRejected is any other HTTP 4xx: forbidden, bad request, a 404
	// about a namespace (a 404 about the resource is KindNotServed).
	KindRejected
	// KindDecode is a response the reflector or the wire could not
	// understand or refused to hold: a malformed frame, a list that is not a
	// list, an unknown event type, a list that pages in a loop or past its
	// caps.
	KindDecode
	// KindWrongType is an object of the wrong type, without metadata, or
	// without a name. It is skipped, never stored.
	KindWrongType
	// KindStore is an error returned by the Store.
	KindStore
	// KindWatchListTimeout means a WatchList stream did not deliver its
	// initial-events-end bookmark: it stayed silent too long, ran out of
	// time, or closed without it. The reflector falls back to list+watch.
	KindWatchListTimeout
	// KindStuckWatch means a watch stayed silent longer than the watchdog
	// allows. The reflector restarts it from the last resourceVersion.
	KindStuckWatch
	// KindShortWatch means a watch closed cleanly within a second, with or
	// without events: a sign of a proxy or server in trouble (the server's
	// own timeout is minutes), so the reflector backs off instead of
	// reconnecting in a tight loop.
	KindShortWatch
	// KindRefused is an object no conforming server sends: one outside
	// the part of the resource the reflector asked for (ErrOutOfScope), or
	// with a name or namespace no real object can have (ErrInvalidName).
	// It is skipped, never stored, and no handler hears of it; the objects
	// around it are kept. It changes no state: it is no reason to relist.
	KindRefused
	// KindRVBackwards means a watch event's resourceVersion is older than
	// one the same watch had already reached (both numbers: see wentBack).
	// The event is neither stored nor told; the reflector relists from the
	// last good resourceVersion, after a backoff.
	KindRVBackwards
	// KindStoreRead is HTTP 500 with reason StorageReadError
	// (apierrors.IsStoreReadError): the server could not read an object
	// from its storage, typically one a cluster admin force-deleted as
	// corrupt (KEP-3926), whose deletion no watch can report. The
	// reflector relists with a consistent read, which drops it.
	KindStoreRead
	// KindNotServed is HTTP 404 NotFound for the resource itself, on a list
	// or a watch: the server no longer serves it (its CRD was deleted, its
	// API group was removed or is not yet ready). Retrying in a loop would
	// only repeat the 404, so the reflector reports it once, then probes
	// with a list every Backoff.Max (30s by default; jittered up to twice
	// that, so that a fleet does not probe in step), without reporting
	// each probe again, and resumes with a consistent list when the
	// resource is served again. A 404 about a namespace is not this kind
	// (see isNotServed): the resource is served, the namespace is not.
	KindNotServed

	numKinds = iota
)

var kindNames = [numKinds]string{
	"Other", "Expired", "TooLargeRV", "Throttled", "Network", "ServerError",
	"Rejected", "Decode", "WrongType", "Store", "WatchListTimeout",
	"StuckWatch", "ShortWatch", "Refused", "RVBackwards", "StoreRead",
	"NotServed",
}

// String returns the kind's name, for logs and metrics labels.
func (k Kind) String() string {
	if k < 0 || int(k) >= numKinds {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindNames[k]
}

// sentinel is an error the reflector itself detects, with the Kind it is
// classified as: the sentinels are the Kinds' finer names, not a second
// taxonomy. A caller asks errors.Is(err, ErrListTooLarge) only when the
// Kind (KindDecode) is not precise enough for it.
type sentinel struct {
	msg  string
	kind Kind
}

func (e *sentinel) Error() string { return e.msg }

// The sentinels callers test, wrapped inside an *Error when the reflector
// detected the problem (rather than the server reporting it).
var (
	// ErrWrongType (KindWrongType): an object's Go type (or, for
	// unstructured objects, its GroupVersionKind) is not
	// Options.ExpectedType's.
	ErrWrongType error = &sentinel{"object of unexpected type", KindWrongType}
	// ErrNoName (KindWrongType): an object to be stored has no name
	// (bookmarks need none).
	ErrNoName error = &sentinel{"object without a name", KindWrongType}
	// ErrDecode (KindDecode) marks a malformed response. A ListerWatcher
	// wraps its decoding errors with it so that they are classified as
	// KindDecode, whatever the encoding: the wire package's
	// ErrMalformedObject and ErrMalformedFrame do, for JSON and protobuf
	// alike. A failed list backs off and lists again; a watch that ends
	// with KindDecode is followed by a relist (see transitions.go).
	ErrDecode error = &sentinel{"malformed response", KindDecode}
	// ErrContinueLoop (KindDecode): a list page's continue token is one an
	// earlier page of the same list already carried; following it would
	// page for ever. The list backs off and starts over.
	ErrContinueLoop error = &sentinel{"list continue token repeated", KindDecode}
	// ErrListTooLarge (KindDecode): a list ran past Options.MaxListPages
	// pages or Options.MaxListItems objects, or a WatchList sent more than
	// MaxListItems events before its initial-events-end bookmark, or a
	// ListerWatcher refused a page with more objects than the room left
	// under MaxListItems before decoding it (ListAtMost). A list backs
	// off, a WatchList falls back to a paged list.
	ErrListTooLarge error = &sentinel{"list too large", KindDecode}
	// ErrOutOfScope (KindRefused): an object outside the part of the
	// resource the ListerWatcher asked for: of another namespace, or one
	// that the label selector, or the field selector's rules on
	// metadata.name and metadata.namespace, exclude (scope.go).
	ErrOutOfScope error = &sentinel{"object outside the reflector's scope", KindRefused}
	// ErrInvalidName (KindRefused): an object whose name could not be a
	// real object's (".", "..", or one holding "/" or "%"), or whose
	// namespace is not a DNS-1123 label. Such names would make two objects
	// share a key, or a key name what is not an object (validIdentity).
	ErrInvalidName error = &sentinel{"invalid object name or namespace", KindRefused}

	// ErrAlreadyRunning is returned by Run when the reflector is already
	// running on another goroutine.
	ErrAlreadyRunning = errors.New("reflector: already running")
	// ErrNotConfigured is returned by Run when the ListerWatcher or the
	// Store given to New is nil.
	ErrNotConfigured = errors.New("reflector: nil ListerWatcher or Store")
)

// The sentinels only the reflector tests: each is its Kind's cause.
var (
	// errNoMetadata: an object has no ObjectMeta, so it has no name and no
	// resourceVersion and cannot be stored.
	errNoMetadata error = &sentinel{"object without metadata", KindWrongType}
	// errUnknownEvent: a watch event of a type other than ADDED, MODIFIED,
	// DELETED, BOOKMARK and ERROR.
	errUnknownEvent error = &sentinel{"unknown watch event type", KindDecode}
	// errNotList: a List response that meta.ListAccessor cannot read.
	errNotList error = &sentinel{"list response is not a list", KindDecode}
	// errWatchListTimeout: no initial-events-end bookmark in time.
	errWatchListTimeout error = &sentinel{"no initial-events-end bookmark in time", KindWatchListTimeout}
	// errWatchListClosed: a WatchList stream ended before its bookmark.
	errWatchListClosed error = &sentinel{"watch closed before the initial-events-end bookmark", KindWatchListTimeout}
	// errStuckWatch: a watch silent for longer than the watchdog allows.
	errStuckWatch error = &sentinel{"watch silent for too long", KindStuckWatch}
	// errShortWatch: a watch closed cleanly within a second.
	errShortWatch error = &sentinel{"watch closed too soon", KindShortWatch}
	// errRVBackwards: a watch event older than the watch's position.
	errRVBackwards error = &sentinel{"resourceVersion went backwards", KindRVBackwards}
)

// Error is what the reflector reports: a Kind, what it was doing, and the
// cause. It is returned as a pointer; use errors.As to get it.
type Error struct {
	// Reflector is Options.Name, to tell reflectors sharing one hook apart.
	Reflector string
	// Op is what the reflector was doing: "list", "watch", "watchlist",
	// "event" or "store".
	Op string
	// Kind classifies the failure.
	Kind Kind
	// Err is the cause.
	Err error
}

// Error describes the failure in one line.
func (e *Error) Error() string {
	return fmt.Sprintf("reflector %s: %s: %s: %v", e.Reflector, e.Op, e.Kind, e.Err)
}

// Unwrap returns the cause, so errors.Is, errors.As and the apierrors
// helpers see through an *Error.
func (e *Error) Unwrap() error { return e.Err }

// KindOf returns err's Kind: the Kind of the *Error it wraps if any,
// otherwise its classification.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return classify(err)
}

// Operations, as they appear in Error.Op.
const (
	opList      = "list"
	opWatch     = "watch"
	opWatchList = "watchlist"
	opEvent     = "event"
	opStore     = "store"
)

// classify sorts an error into a Kind. A sentinel's Kind is its own; the
// rest comes from the server or the transport, and is sorted by what it
// says. The order matters: a 410 is also a 4xx, a decoding failure
// reported by apimachinery's stream watcher is also a 500, and a decoding
// sentinel yields to what the server said (a 410, a 429) when an error
// carries both.
func classify(err error) Kind {
	var s *sentinel
	switch {
	case err == nil:
		return KindOther
	case errors.As(err, &s) && s.kind != KindDecode:
		return s.kind
	case isExpired(err):
		return KindExpired
	case isTooLargeResourceVersion(err):
		return KindTooLargeRV
	case apierrors.IsStoreReadError(err):
		return KindStoreRead
	case apierrors.IsTooManyRequests(err):
		return KindThrottled
	case isNotServed(err):
		return KindNotServed
	case s != nil, isDecode(err):
		return KindDecode
	}
	if code, ok := statusCode(err); ok {
		if code >= 500 {
			return KindServerError
		}
		return KindRejected
	}
	if isNetwork(err) {
		return KindNetwork
	}
	return KindOther
}

// isExpired reports a 410. Servers before 1.18 said "Gone" where later ones
// say "Expired"; both mean the same to a reflector.
func isExpired(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

// isNotServed reports a 404 NotFound that says the resource itself is
// not served. A list or watch of a resource the server serves is never
// 404 for want of objects (an empty list is a 200), so a 404 names the
// resource, except when its details name a namespace: a namespace that
// is gone is no reason to stop asking for the resource.
func isNotServed(err error) bool {
	if !apierrors.IsNotFound(err) {
		return false
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		if d := status.Status().Details; d != nil && d.Kind == "namespaces" {
			return false
		}
	}
	return true
}

// tooLargeRVMessage is what servers before 1.18.6 said instead of setting
// the ResourceVersionTooLarge cause.
const tooLargeRVMessage = "Too large resource version"

// isTooLargeResourceVersion reports the server saying it has not yet reached
// the resourceVersion asked for. Current servers set a status cause; older
// ones only put it in a 504 Timeout's message, so check both.
func isTooLargeResourceVersion(err error) bool {
	if apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		return true
	}
	if !apierrors.IsTimeout(err) {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	s := status.Status()
	if s.Details != nil {
		for _, cause := range s.Details.Causes {
			if cause.Message == tooLargeRVMessage {
				return true
			}
		}
	}
	return strings.Contains(s.Message, tooLargeRVMessage)
}

// clientWatchDecoding is the cause type apimachinery's StreamWatcher puts on
// the 500 Status it emits when it cannot decode a frame.
const clientWatchDecoding = "ClientWatchDecoding"

// isDecode reports a response that could not be understood, as the server
// or the decoder put it.
func isDecode(err error) bool {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	return apierrors.HasStatusCause(err, clientWatchDecoding) ||
		apierrors.IsUnexpectedObjectError(err) ||
		errors.As(err, &syntax) || errors.As(err, &typ)
}

// statusCode returns the HTTP code of an API error, if err carries one.
func statusCode(err error) (int32, bool) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return 0, false
	}
	code := status.Status().Code
	return code, code != 0
}

// isNetwork reports a transport failure.
func isNetwork(err error) bool {
	var netErr net.Error
	var urlErr *url.Error
	return utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) ||
		utilnet.IsProbableEOF(err) || utilnet.IsHTTP2ConnectionLost(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.As(err, &netErr) || errors.As(err, &urlErr)
}

// retryAfter returns the delay the server asked for (Retry-After on a 429,
// or a 504's suggested delay), zero if none.
func retryAfter(err error) (seconds int) {
	if s, ok := apierrors.SuggestsClientDelay(err); ok && s > 0 {
		return s
	}
	return 0
}
