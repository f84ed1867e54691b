package fakeapi

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Faults injects the failures a client meets against real clusters:
// throttling and server errors, slow responses, watch streams that stall,
// frames cut in half by a dying proxy, and frames that do not decode.
// Each fault is also reachable over HTTP (see doc.go) so out-of-process
// clients can be tested the same way.
//
// Resources are named by their plural ("pods", "deployments"); an empty
// verb or resource matches any. Faults is safe for concurrent use.
type Faults struct {
	mu sync.Mutex // guards every field below
	// failures are pending request failures, consumed first to last.
	failures []*Failure
	// latencies delay matching requests.
	latencies []latencyRule
	// stalls hold the watches of a resource silent.
	stalls map[string]*stallRule
	// frames are pending frame faults, one frame each.
	frames []frameRule
	// now is the clock for stall deadlines.
	now func() time.Time
}

// Failure makes the next Count matching requests fail with a Status.
type Failure struct {
	// Verb is get, list, watch, create, update, patch or delete; "" is any.
	Verb string `json:"verb,omitempty"`
	// Resource is the plural resource name; "" is any.
	Resource string `json:"resource,omitempty"`
	// Count is how many requests fail; 0 means 1.
	Count int `json:"count,omitempty"`
	// Code is the HTTP status; 0 means 500. The Status reason follows the
	// code (429 TooManyRequests, 500 InternalError, 503 ServiceUnavailable,
	// 504 Timeout, 410 Expired, ...).
	Code int `json:"code,omitempty"`
	// RetryAfterSeconds sets the Retry-After header and the Status detail,
	// which client-go honours for 429 and 5xx.
	RetryAfterSeconds int `json:"retryAfterSeconds,omitempty"`
	// Message is the Status message; empty means a generic one.
	Message string `json:"message,omitempty"`
}

type latencyRule struct {
	verb, resource string
	delay          time.Duration
}

type stallRule struct {
	// released is closed when the stall ends.
	released chan struct{}
	// until ends the stall by time; zero means "until ResumeWatches".
	until time.Time
	// held is set for a hold (HoldWatches): it counts the frames the
	// resource's watches keep in memory.
	held *atomic.Int64
}

// frameFaultKind says what to do to a watch frame.
type frameFaultKind int

const (
	frameIntact frameFaultKind = iota
	// frameCut writes half the frame and aborts the connection.
	frameCut
	// frameMalformed writes a well-delimited frame that does not decode.
	frameMalformed
)

type frameRule struct {
	resource string
	kind     frameFaultKind
}

func newFaults() *Faults {
	return &Faults{stalls: map[string]*stallRule{}, now: time.Now}
}

// FailNext queues a failure for the next matching requests.
func (f *Faults) FailNext(failure Failure) {
	if failure.Count <= 0 {
		failure.Count = 1
	}
	if failure.Code == 0 {
		failure.Code = http.StatusInternalServerError
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures = append(f.failures, &failure)
}

// SetLatency delays every matching request by d before it is handled;
// d <= 0 removes the rule for that verb and resource.
func (f *Faults) SetLatency(verb, resource string, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	kept := f.latencies[:0]
	for _, l := range f.latencies {
		if l.verb != verb || l.resource != resource {
			kept = append(kept, l)
		}
	}
	f.latencies = kept
	if d > 0 {
		f.latencies = append(f.latencies, latencyRule{verb: verb, resource: resource, delay: d})
	}
}

// StallWatches makes every watch of resource (open or future) stop sending
// anything, events and bookmarks, while the connection stays open: what a
// client sees when a server or proxy hangs. The stall lasts d, or until
// ResumeWatches when d <= 0. Events are not lost; they flow after it.
func (f *Faults) StallWatches(resource string, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resumeLocked(resource)
	rule := &stallRule{released: make(chan struct{})}
	if d > 0 {
		rule.until = f.now().Add(d)
	}
	f.stalls[resource] = rule
}

// HoldWatches makes every watch of resource keep what it would send in
// memory, as a proxy that buffers a stream would: the watch goes on reading
// and encoding its events, from the next one on, but writes none of them
// until ResumeWatches, which sends them all at once. A client then drains a
// backlog that is ready, at the pace of its own reading and decoding; a
// StallWatches backlog is encoded as it is sent. resource "" holds every
// resource. Each watch holds at most maxHeldBytes and reads no further
// events past that until the hold ends.
func (f *Faults) HoldWatches(resource string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resumeLocked(resource)
	f.stalls[resource] = &stallRule{released: make(chan struct{}), held: new(atomic.Int64)}
}

// HeldFrames is the number of frames (events and bookmarks) the watches of
// resource have held so far under the hold that applies to them, its own or
// HoldWatches(""); 0 when they are not held. It counts up only: frames of a
// watch that ended while held still count.
func (f *Faults) HeldFrames(resource string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if rule := f.holdRuleLocked(resource); rule != nil {
		return rule.held.Load()
	}
	return 0
}

// ResumeWatches ends a stall or a hold of resource's watches.
func (f *Faults) ResumeWatches(resource string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resumeLocked(resource)
}

func (f *Faults) resumeLocked(resource string) {
	if rule, ok := f.stalls[resource]; ok {
		close(rule.released)
		delete(f.stalls, resource)
	}
}

// CutNextWatchFrame makes the next event frame on a watch of resource go
// out half-written, after which the connection is aborted.
func (f *Faults) CutNextWatchFrame(resource string) { f.addFrameRule(resource, frameCut) }

// MalformNextWatchFrame replaces the next event frame on a watch of
// resource with bytes that do not decode.
func (f *Faults) MalformNextWatchFrame(resource string) { f.addFrameRule(resource, frameMalformed) }

func (f *Faults) addFrameRule(resource string, kind frameFaultKind) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.frames = append(f.frames, frameRule{resource: resource, kind: kind})
}

// Reset removes every fault and ends every stall.
func (f *Faults) Reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures, f.latencies, f.frames = nil, nil, nil
	for resource := range f.stalls {
		f.resumeLocked(resource)
	}
}

// before applies latency and queued failures to a request. It returns the
// Status error to answer with, if any. A delay ends early when the client
// leaves (ctx) or the server closes (closed); the latter is needed because
// net/http cancels no context for a request whose body is still unread, and
// Close waits for every request.
func (f *Faults) before(ctx context.Context, closed <-chan struct{}, verb, resource string) error {
	f.mu.Lock()
	var delay time.Duration
	for _, l := range f.latencies {
		if matchesRule(l.verb, l.resource, verb, resource) {
			delay += l.delay
		}
	}
	var failure *Failure
	for i, fl := range f.failures {
		if matchesRule(fl.Verb, fl.Resource, verb, resource) {
			copied := *fl
			failure = &copied
			if fl.Count--; fl.Count == 0 {
				f.failures = append(f.failures[:i], f.failures[i+1:]...)
			}
			break
		}
	}
	f.mu.Unlock()
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		case <-closed:
			return apierrors.NewServiceUnavailable(errServerClosed.Error())
		}
	}
	if failure != nil {
		return failureStatus(*failure)
	}
	return nil
}

// stall reports whether resource's watches are stalled, by a rule for
// resource or by one for every resource (""), with a channel closed when
// that stall ends (by ResumeWatches, Reset or deadline). A hold is not a
// stall: the watch goes on (see hold).
func (f *Faults) stall(resource string) (<-chan struct{}, time.Duration, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, key := range []string{resource, ""} {
		rule, ok := f.stalls[key]
		if !ok || rule.held != nil {
			continue
		}
		var left time.Duration
		if !rule.until.IsZero() {
			if left = rule.until.Sub(f.now()); left <= 0 {
				f.resumeLocked(key)
				continue
			}
		}
		return rule.released, left, true
	}
	return nil, 0, false
}

// hold reports whether resource's watches are held (HoldWatches), with the
// channel closed when the hold ends and the count of held frames.
func (f *Faults) hold(resource string) (<-chan struct{}, *atomic.Int64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.holdLocked(resource)
}

func (f *Faults) holdLocked(resource string) (<-chan struct{}, *atomic.Int64, bool) {
	if rule := f.holdRuleLocked(resource); rule != nil {
		return rule.released, rule.held, true
	}
	return nil, nil, false
}

// holdRuleLocked is the hold that applies to resource's watches: its own,
// or the one of every resource (""), or nil.
func (f *Faults) holdRuleLocked(resource string) *stallRule {
	for _, key := range []string{resource, ""} {
		if rule, ok := f.stalls[key]; ok && rule.held != nil {
			return rule
		}
	}
	return nil
}

// onFrame is what a watch asks before each frame it writes, under one hold
// of the lock: the next frame fault for resource, if any, and, unless the
// watch holds already, the hold that applies to it now, if any.
func (f *Faults) onFrame(resource string, holding bool) (fault frameFaultKind, released <-chan struct{}, held *atomic.Int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fault = f.frameFaultLocked(resource)
	if !holding {
		released, held, _ = f.holdLocked(resource)
	}
	return fault, released, held
}

// frameFaultLocked takes the next frame fault for resource, if any.
func (f *Faults) frameFaultLocked(resource string) frameFaultKind {
	for i, rule := range f.frames {
		if rule.resource == "" || rule.resource == resource {
			f.frames = append(f.frames[:i], f.frames[i+1:]...)
			return rule.kind
		}
	}
	return frameIntact
}

func matchesRule(ruleVerb, ruleResource, verb, resource string) bool {
	return (ruleVerb == "" || ruleVerb == verb) && (ruleResource == "" || ruleResource == resource)
}

// reasonForCode is the Status reason a real server uses with each code.
var reasonForCode = map[int]metav1.StatusReason{
	400: metav1.StatusReasonBadRequest, 401: metav1.StatusReasonUnauthorized,
	403: metav1.StatusReasonForbidden, 404: metav1.StatusReasonNotFound,
	405: metav1.StatusReasonMethodNotAllowed, 406: metav1.StatusReasonNotAcceptable,
	409: metav1.StatusReasonConflict, 410: metav1.StatusReasonExpired,
	413: metav1.StatusReasonRequestEntityTooLarge, 415: metav1.StatusReasonUnsupportedMediaType,
	422: metav1.StatusReasonInvalid, 429: metav1.StatusReasonTooManyRequests,
	500: metav1.StatusReasonInternalError, 503: metav1.StatusReasonServiceUnavailable,
	504: metav1.StatusReasonTimeout,
}

func failureStatus(fl Failure) *apierrors.StatusError {
	msg := fl.Message
	if msg == "" {
		msg = "fakeapi: injected failure (" + http.StatusText(fl.Code) + ")"
	}
	reason, ok := reasonForCode[fl.Code]
	if !ok {
		reason = metav1.StatusReasonUnknown
	}
	status := metav1.Status{Status: metav1.StatusFailure, Code: int32(fl.Code), Reason: reason, Message: msg}
	if fl.RetryAfterSeconds > 0 {
		status.Details = &metav1.StatusDetails{RetryAfterSeconds: int32(fl.RetryAfterSeconds)}
	}
	return &apierrors.StatusError{ErrStatus: status}
}
