package informer

// Read-your-writes. A controller that writes an object gets a
// resourceVersion back; its cache holds that write only once the watch
// has carried it to the informer and the consumer has applied it. Until
// then the cache is stale for that object, and a controller that acts on
// it may act twice (create what it just created, say). WaitFor, and the
// Expectations built on it (expectations.go), let it wait instead.
//
// How the informer knows how far its cache has got: the queue's writer
// (syncWatchingStore) records the resourceVersion of every write it hands
// the queue (an event's object, a bookmark, a relist), in order; whoever
// then sees the queue drained (deltafifo.Queue.Drained: nothing waiting,
// nothing in flight) knows every write up to the last one recorded before
// it looked has been applied, and advances the applied resourceVersion to
// it. The consumer looks after each batch. The writer looks after a write
// only while someone waits (WaitFor); otherwise whoever reads the applied
// resourceVersion (AppliedResourceVersion, Freshness, WaitFor) looks
// first. So a write the queue applied inline, which leaves it drained, is
// seen by the next reader, and a busy watch does not pay a look at the
// queue (its lock) for every event.
//
// Two honest limits, both the server's and the queue's, not this code's:
//   - a bookmark moves the applied resourceVersion without any object
//     changing: "the cache has applied rv" means the cache is at least as
//     fresh as the server was at rv, not that an object with rv exists;
//   - the queue merges the updates of an object that waits (unless
//     Options.KeepAllUpdates), so handlers may never see the version a
//     write produced, only a later one: wait for the cache, not for a
//     handler call with that exact version.
//
// The applied resourceVersion advances only when the queue drains, so under
// a stream of events that never lets it drain, WaitFor waits for a lull: it
// is a lower bound, never ahead of the cache.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/seed31a95821/informer/internal/rvorder"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// freshness is how far the cache has got.
type freshness struct {
	mu sync.Mutex // guards every field below
	// handedSeq numbers the writes handed to the queue that carried a
	// resourceVersion; handedRV is the newest such version.
	handedSeq uint64
	handedRV  string
	// handedAt is when handedRV was recorded (as appliedAt, below): what a
	// reader that finds the queue drained stamps the move with. The move
	// happened at or after it, so SinceAdvanced errs stale, never fresh.
	handedAt time.Duration
	// appliedSeq and appliedRV are the newest handed write known applied;
	// appliedAt is when they last moved, as an offset from clock's epoch
	// (zero before they first did). An event pays for reading it each
	// time the cache catches up, so clock reads it coarsely
	// (freshness_clock.go).
	appliedSeq uint64
	appliedRV  string
	appliedAt  time.Duration
	clock      stampClock
	// advanced is closed each time appliedRV moves, and made again only
	// when a waiter asks for it (WaitFor): nil while nobody waits, so
	// that an event costs no allocation.
	advanced chan struct{}
}

// handed records the resourceVersion of a write the queue accepted and,
// if someone waits for the cache to advance, looks whether it is applied
// already (see the top of this file for who else looks). Events and
// bookmarks only move it forward (a watch from "0" replays objects in no
// order); a relist sets it, since a restored server may have gone back.
func (s *SharedInformer[T]) handed(rv string, replace bool) {
	if rv == "" {
		return
	}
	f := &s.fresh
	// No defer here, nor in advanceApplied: this runs for every event, and
	// nothing between the lock and the unlock can panic.
	f.mu.Lock()
	if replace || !rvorder.Older(rv, f.handedRV) {
		f.handedSeq++
		f.handedRV, f.handedAt = rv, f.clock.read()
	}
	if f.advanced != nil {
		s.advanceLocked(f.handedAt)
	}
	f.mu.Unlock()
}

// advanceApplied moves the applied resourceVersion to the last handed one
// if the queue is drained. The consumer calls it after each batch, when a
// drained queue has just become so: the move is stamped now.
func (s *SharedInformer[T]) advanceApplied() {
	f := &s.fresh
	f.mu.Lock()
	s.advanceLocked(f.clock.read())
	f.mu.Unlock()
}

// catchUpLocked is a reader's look (AppliedResourceVersion, Freshness,
// WaitFor): a drained queue has applied the last handed write, which a
// writer no longer looks for itself. The move happened at or after that
// write was handed, which stamps it. The caller holds fresh.mu.
func (s *SharedInformer[T]) catchUpLocked() {
	s.advanceLocked(s.fresh.handedAt)
}

// advanceLocked moves the applied resourceVersion to the last handed one,
// if the queue is drained: every write handed so far has then been
// processed. The caller holds fresh.mu, which keeps handed writes from
// being recorded between the look at the queue and the move (the lock
// order is fresh.mu, then the queue's own lock; the queue never calls back
// into this file).
//
// at stamps the move (appliedAt): a moment at or before it.
func (s *SharedInformer[T]) advanceLocked(at time.Duration) {
	f := &s.fresh
	if f.handedSeq <= f.appliedSeq || !s.queue.Drained() {
		return
	}
	f.appliedSeq, f.appliedRV, f.appliedAt = f.handedSeq, f.handedRV, at
	if f.advanced != nil {
		close(f.advanced)
		f.advanced = nil
	}
}

// AppliedResourceVersion is the resourceVersion up to which the cache has
// applied every event: that of the last event, bookmark or list applied
// while nothing else waited in the queue. "" before the first.
func (s *SharedInformer[T]) AppliedResourceVersion() string {
	s.fresh.mu.Lock()
	defer s.fresh.mu.Unlock()
	s.catchUpLocked()
	return s.fresh.appliedRV
}

// Freshness says how stale the cache may be.
type Freshness struct {
	// AppliedResourceVersion: see SharedInformer.AppliedResourceVersion.
	AppliedResourceVersion string
	// ReceivedResourceVersion is the newest resourceVersion the reflector
	// handed to the queue; ahead of AppliedResourceVersion while the
	// consumer catches up.
	ReceivedResourceVersion string
	// SinceAdvanced is how long ago AppliedResourceVersion last moved
	// (0 before it first did), read coarsely: it may exceed the truth by
	// about 10ms (freshness_clock.go), never fall short. With bookmarks
	// on, a healthy watch moves it at least once a bookmark interval
	// (about a minute), even when nothing changes: much longer means a
	// watch that is held up.
	SinceAdvanced time.Duration
}

// Freshness returns how far the cache has got, and since when.
func (s *SharedInformer[T]) Freshness() Freshness {
	f := &s.fresh
	f.mu.Lock()
	defer f.mu.Unlock()
	s.catchUpLocked()
	out := Freshness{AppliedResourceVersion: f.appliedRV, ReceivedResourceVersion: f.handedRV}
	if f.appliedSeq != 0 { // it has moved
		out.SinceAdvanced = time.Since(f.clock.epoch) - f.appliedAt
	}
	return out
}

// WaitFor returns nil once the cache has applied every event up to rv (a
// resourceVersion a write returned), so that the lister shows that write
// or a later state. It compares resourceVersions as numbers, the rule
// apimachinery uses where the server promises they are comparable; when
// either is not a number it does not guess, and returns an error wrapping
// ErrRVNotComparable. It also returns ctx's error when ctx ends first, and
// ErrInformerStopped once the informer has stopped.
//
// The limits of the promise (a bookmark moves the cache's version with no
// object changed; handlers may see merged updates) are told in
// freshness.go.
func (s *SharedInformer[T]) WaitFor(ctx context.Context, rv string) error {
	for {
		s.fresh.mu.Lock()
		s.catchUpLocked()
		if s.fresh.advanced == nil {
			s.fresh.advanced = make(chan struct{})
		}
		applied, advanced := s.fresh.appliedRV, s.fresh.advanced
		s.fresh.mu.Unlock()
		if done, err := reached(applied, rv); done || err != nil {
			if err != nil {
				return fmt.Errorf("informer %s: wait for %q: %w", s.opts.Name, rv, err)
			}
			return nil
		}
		select {
		case <-advanced:
		case <-ctx.Done():
			return fmt.Errorf("informer %s: wait for %q (cache at %q): %w", s.opts.Name, rv, applied, ctx.Err())
		case <-s.done:
			return fmt.Errorf("informer %s: wait for %q: %w", s.opts.Name, rv, ErrInformerStopped)
		}
	}
}

// reached reports whether a cache at applied holds rv. Nothing applied yet
// is "not yet", and so is a cache at "0", which an empty server's list
// may carry and which is no position (any write comes after it); a
// resourceVersion that is not a number is an error.
func reached(applied, rv string) (bool, error) {
	if _, err := resourceversion.CompareResourceVersion(rv, rv); err != nil {
		return false, fmt.Errorf("%w: %q", ErrRVNotComparable, rv)
	}
	if applied == "" || applied == "0" {
		return false, nil
	}
	c, err := resourceversion.CompareResourceVersion(applied, rv)
	if err != nil {
		return false, fmt.Errorf("%w: cache at %q", ErrRVNotComparable, applied)
	}
	return c >= 0, nil
}

// resourceVersionOf is obj's resourceVersion, "" if it has no metadata.
// A typed object is asked directly, as meta.Accessor would first, without
// the call (this runs for every event).
func resourceVersionOf(obj runtime.Object) string {
	if m, ok := obj.(metav1.Object); ok {
		return m.GetResourceVersion()
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return m.GetResourceVersion()
}
