package informer

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/seed31a95821/informer/internal/rvorder"
)

// AppliedVersioner is a cache that says up to which resourceVersion it has
// applied every event: a SharedInformer.
type AppliedVersioner interface {
	AppliedResourceVersion() string
}

// ErrExpectationExpired is returned by Expectations.Satisfied for an
// expectation the cache did not meet within the timeout: it is given up,
// and the caller acts on the cache as it is, which may still be stale.
var ErrExpectationExpired = errors.New("expectation expired before the cache met it")

// Expectations remember the writes a reconciler made, so that it does not
// act on a key again before its cache has seen them: "I created X at
// resourceVersion n; until the cache has applied n, what it says about X
// is stale". A reconciler calls Expect after each write and Satisfied
// before it reads the cache for a key; when Satisfied says no, it
// requeues the key (with a delay) instead of acting.
//
// The cache is the informer the reconciler reads (see
// SharedInformer.AppliedResourceVersion and the limits told in
// freshness.go). An expectation not met within Timeout is given up, and
// Satisfied says so with ErrExpectationExpired: a write whose event never
// comes (the object deleted at once, a watch that is down) must not block
// its key for ever.
//
// It is safe for concurrent use.
type Expectations struct {
	cache   AppliedVersioner
	timeout time.Duration

	mu         sync.Mutex // guards pending, expects and sweepAfter
	pending    map[string]expectation
	expects    int // calls of Expect since the last sweep
	sweepAfter int // calls of Expect that make the next sweep
}

type expectation struct {
	rv       string
	deadline time.Time
}

// DefaultExpectationTimeout is how long an expectation waits when
// NewExpectations is given no timeout: client-go's controllers use five
// minutes; a cache that is that far behind is a failure to report, not to
// wait for.
const DefaultExpectationTimeout = 5 * time.Minute

// NewExpectations returns Expectations met by cache. A timeout of 0 means
// DefaultExpectationTimeout.
func NewExpectations(cache AppliedVersioner, timeout time.Duration) *Expectations {
	if timeout <= 0 {
		timeout = DefaultExpectationTimeout
	}
	return &Expectations{cache: cache, timeout: timeout, pending: map[string]expectation{}}
}

// Expect records that key must not be acted on until the cache has
// applied rv, the resourceVersion a write of key returned. Several writes
// of one key keep the newest resourceVersion, with a fresh deadline.
func (e *Expectations) Expect(key, rv string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := time.Now()
	if old, ok := e.pending[key]; ok && rvorder.Older(rv, old.rv) {
		rv = old.rv
	}
	e.pending[key] = expectation{rv: rv, deadline: now.Add(e.timeout)}
	e.sweep(now)
}

// sweep forgets the expectations past their deadline, so that the keys
// never consulted again (objects deleted meanwhile) do not pile up. It
// walks the map only after as many calls of Expect as the map held at the
// last walk (at least 64), so each call pays O(1) on average. e.mu must
// be held.
func (e *Expectations) sweep(now time.Time) {
	e.expects++
	if e.expects < e.sweepAfter {
		return
	}
	for key, x := range e.pending {
		if !now.Before(x.deadline) {
			delete(e.pending, key)
		}
	}
	e.expects, e.sweepAfter = 0, max(len(e.pending), 64)
}

// Satisfied reports whether the reconciler may act on key: true when no
// expectation is pending for it, or the cache has applied it (the
// expectation is then cleared). It is false while the cache is behind.
// When the timeout has passed it gives up: true, with an error wrapping
// ErrExpectationExpired, for the caller to log. A resourceVersion that
// cannot be compared (ErrRVNotComparable) keeps it false, with that error,
// until the timeout.
func (e *Expectations) Satisfied(key string) (bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.pending[key]
	if !ok {
		return true, nil
	}
	done, err := reached(e.cache.AppliedResourceVersion(), x.rv)
	if done {
		delete(e.pending, key)
		return true, nil
	}
	if !time.Now().Before(x.deadline) {
		delete(e.pending, key)
		return true, fmt.Errorf("informer: expectation for %s at %q: %w", key, x.rv, ErrExpectationExpired)
	}
	if err != nil {
		return false, fmt.Errorf("informer: expectation for %s: %w", key, err)
	}
	return false, nil
}

// Forget drops key's expectation: the reconciler knows better (the object
// was deleted, say).
func (e *Expectations) Forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.pending, key)
}
