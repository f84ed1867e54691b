package reflector

import (
	"sort"
	"sync"
	"testing"
	"time"
)

// fakeClock is a clock whose time moves only when the test says so.
// Safe for concurrent use: the reflector's goroutine arms timers while the
// test's goroutine advances time.
type fakeClock struct {
	mu      sync.Mutex // guards now, timers and changed
	now     time.Time
	timers  []*fakeTimer  // armed, not yet fired or stopped
	changed chan struct{} // closed (and replaced) whenever timers changes
}

type fakeTimer struct {
	clock *fakeClock
	at    time.Time
	ch    chan time.Time // nil for an AfterFunc timer
	fn    func()         // set for an AfterFunc timer
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), changed: make(chan struct{})}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{clock: c, at: c.now.Add(d), ch: make(chan time.Time, 1)}
	if d <= 0 {
		t.ch <- c.now
		return t
	}
	c.timers = append(c.timers, t)
	c.notifyLocked()
	return t
}

// AfterFunc arms a timer that calls f, on a goroutine of its own as with
// time.AfterFunc, when Advance reaches it.
func (c *fakeClock) AfterFunc(d time.Duration, f func()) timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{clock: c, at: c.now.Add(d), fn: f}
	if d <= 0 {
		go f()
		return t
	}
	c.timers = append(c.timers, t)
	c.notifyLocked()
	return t
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

func (t *fakeTimer) Stop() bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.timers {
		if x == t {
			c.timers = append(c.timers[:i], c.timers[i+1:]...)
			c.notifyLocked()
			return true
		}
	}
	return false
}

func (c *fakeClock) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Advance moves time forward by d and fires every timer now due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.timers[:0]
	for _, t := range c.timers {
		if !t.at.After(c.now) {
			if t.fn != nil {
				go t.fn()
			} else {
				t.ch <- c.now
			}
			continue
		}
		kept = append(kept, t)
	}
	c.timers = kept
	c.notifyLocked()
}

// pending returns the time left on each armed timer, shortest first.
func (c *fakeClock) pending() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]time.Duration, 0, len(c.timers))
	for _, t := range c.timers {
		out = append(out, t.at.Sub(c.now))
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// waitPending waits until at least n timers are armed.
func (c *fakeClock) waitPending(t *testing.T, n int) []time.Duration {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		c.mu.Lock()
		count, changed := len(c.timers), c.changed
		c.mu.Unlock()
		if count >= n {
			return c.pending()
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("waited 10s for %d armed timers, have %d", n, count)
		}
	}
}
