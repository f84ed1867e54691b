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
// errors.Is(err, ErrStuckWatch), apierrors.IsResourceExpired(err),
// errors.As(err, &netErr).
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
	// KindRejected is any other HTTP 4xx: forbidden, not found, bad request.
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

	numKinds = iota
)

var kindNames = [numKinds]string{
	"Other", "Expired", "TooLargeRV", "Throttled", "Network", "ServerError",
	"Rejected", "Decode", "WrongType", "Store", "WatchListTimeout",
	"StuckWatch", "ShortWatch",
}

// String returns the kind's name, for logs and metrics labels.
func (k Kind) String() string {
	if k < 0 || int(k) >= numKinds {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindNames[k]
}

// Sentinel errors, wrapped inside an *Error when the reflector itself
// detected the problem (rather than the server reporting it).
var (
	// ErrWrongType: an object's Go type (or, for unstructured objects, its
	// GroupVersionKind) is not Options.ExpectedType's.
	ErrWrongType = errors.New("object of unexpected type")
	// ErrNoMetadata: an object has no ObjectMeta, so it has no name and no
	// resourceVersion and cannot be stored.
	ErrNoMetadata = errors.New("object without metadata")
	// ErrNoName: an object to be stored has no name (bookmarks need none).
	ErrNoName = errors.New("object without a name")
	// ErrUnknownEvent: a watch event of a type other than ADDED, MODIFIED,
	// DELETED, BOOKMARK and ERROR.
	ErrUnknownEvent = errors.New("unknown watch event type")
	// ErrNotList: a List response that meta.ListAccessor cannot read.
	ErrNotList = errors.New("list response is not a list")
	// ErrDecode marks a malformed response. A ListerWatcher may wrap its
	// decoding errors with it so that they are classified as KindDecode.
	// The wire package does not import this one: its malformed watch frames
	// arrive as ERROR events marked as decoding failures, and its JSON
	// errors are recognised by type, but a list it cannot decode as
	// protobuf (wire.ErrMalformedObject) counts as KindOther. For a failed
	// list the reaction is the same for both kinds: back off and list again.
	// A watch that ends with KindDecode is followed by a relist too, one
	// that ends with KindOther by a new watch.
	ErrDecode = errors.New("malformed response")
	// ErrWatchListTimeout: no initial-events-end bookmark in time.
	ErrWatchListTimeout = errors.New("no initial-events-end bookmark in time")
	// ErrWatchListClosed: a WatchList stream ended before its bookmark.
	ErrWatchListClosed = errors.New("watch closed before the initial-events-end bookmark")
	// ErrStuckWatch: a watch silent for longer than the watchdog allows.
	ErrStuckWatch = errors.New("watch silent for too long")
	// ErrShortWatch: a watch closed cleanly within a second.
	ErrShortWatch = errors.New("watch closed too soon")
	// ErrContinueLoop: a list page's continue token is one an earlier page
	// of the same list already carried; following it would page for ever.
	// Classified as KindDecode: the list backs off and starts over.
	ErrContinueLoop = errors.New("list continue token repeated")
	// ErrListTooLarge: a list ran past Options.MaxListPages pages or
	// Options.MaxListItems objects, or a WatchList sent more than
	// MaxListItems events before its initial-events-end bookmark.
	// Classified as KindDecode: a list backs off, a WatchList falls back to
	// a paged list.
	ErrListTooLarge = errors.New("list too large")
	// ErrAlreadyRunning is returned by Run when the reflector is already
	// running on another goroutine.
	ErrAlreadyRunning = errors.New("reflector: already running")
	// ErrNotConfigured is returned by Run when the ListerWatcher or the
	// Store given to New is nil.
	ErrNotConfigured = errors.New("reflector: nil ListerWatcher or Store")
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

// classify sorts an error from the server or the transport into a Kind.
// The order matters: a 410 is also a 4xx, a decoding failure reported by
// apimachinery's stream watcher is also a 500.
func classify(err error) Kind {
	switch {
	case err == nil:
		return KindOther
	case errors.Is(err, ErrWatchListTimeout), errors.Is(err, ErrWatchListClosed):
		return KindWatchListTimeout
	case errors.Is(err, ErrStuckWatch):
		return KindStuckWatch
	case errors.Is(err, ErrShortWatch):
		return KindShortWatch
	case errors.Is(err, ErrWrongType), errors.Is(err, ErrNoMetadata), errors.Is(err, ErrNoName):
		return KindWrongType
	case isExpired(err):
		return KindExpired
	case isTooLargeResourceVersion(err):
		return KindTooLargeRV
	case apierrors.IsTooManyRequests(err):
		return KindThrottled
	case isDecode(err):
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

// isDecode reports a response that could not be understood.
func isDecode(err error) bool {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	return errors.Is(err, ErrDecode) || errors.Is(err, ErrNotList) ||
		errors.Is(err, ErrUnknownEvent) || errors.Is(err, ErrContinueLoop) ||
		errors.Is(err, ErrListTooLarge) ||
		apierrors.HasStatusCause(err, clientWatchDecoding) ||
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
