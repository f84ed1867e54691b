package discovery

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/seed31a95821/informer/rest"
)

// Defaults of Options.
const (
	// DefaultMinRefreshInterval is the least time between two reads of the
	// documents: a burst of misses (a thousand lookups of a kind nobody
	// serves) costs one read, then one every five seconds at most.
	DefaultMinRefreshInterval = 5 * time.Second
	// DefaultMaxRefreshInterval caps the backoff after failed reads.
	DefaultMaxRefreshInterval = time.Minute
	// DefaultTimeout bounds one whole read: /api and /apis, and, in the
	// legacy form, every group version's list.
	DefaultTimeout = 30 * time.Second
)

// Options tune a Client. The zero value is ready to use.
type Options struct {
	// MinRefreshInterval is the least time between the end of one read and
	// the start of the next: a Refresh sooner returns the Snapshot at hand.
	// Zero means DefaultMinRefreshInterval; negative, no bound (tests).
	MinRefreshInterval time.Duration
	// MaxRefreshInterval caps the wait after failed reads, which doubles
	// from MinRefreshInterval with each failure in a row. Zero means
	// DefaultMaxRefreshInterval.
	MaxRefreshInterval time.Duration
	// Timeout bounds one whole read. Zero means DefaultTimeout.
	Timeout time.Duration
}

func (o Options) minInterval() time.Duration {
	switch {
	case o.MinRefreshInterval < 0:
		return 0
	case o.MinRefreshInterval == 0:
		return DefaultMinRefreshInterval
	}
	return o.MinRefreshInterval
}

func (o Options) maxInterval() time.Duration {
	if o.MaxRefreshInterval <= 0 {
		return DefaultMaxRefreshInterval
	}
	return max(o.MaxRefreshInterval, o.minInterval())
}

func (o Options) timeout() time.Duration {
	if o.Timeout <= 0 {
		return DefaultTimeout
	}
	return o.Timeout
}

// Client reads and keeps what one API server serves. It sends its
// requests through a shared *rest.Client (its credentials, rate limit,
// connections and metrics). Reads happen on demand, never in the
// background: the first Snapshot, and each Refresh the interval allows.
// Concurrent callers share one read in progress.
//
// A Client is safe for concurrent use.
type Client struct {
	rc   *rest.Client
	opts Options
	now  func() time.Time // time.Now; tests move it

	mu     sync.Mutex    // guards snap, err, readAt, wait, early and reading
	snap   *Snapshot     // the last good read; nil before one
	err    error         // why the last read failed; nil after a good one
	readAt time.Time     // when the last read ended; zero before one
	wait   time.Duration // before the next read may start: minInterval, doubled per failure
	// early is the one Refresh allowed before the interval is up: granted
	// by each good read the interval allowed, spent by a read that comes
	// early. So a kind created just after a read (a CRD the program has
	// just made) is found by the first miss, and a storm of misses still
	// costs at most one read more per interval.
	early   bool
	reading chan struct{} // closed when the read in progress ends; nil when none is
}

// New returns a Client that reads through rc. It sends nothing yet.
func New(rc *rest.Client, opts Options) *Client {
	return &Client{rc: rc, opts: opts, now: time.Now}
}

// Snapshot returns what the server serves, as last read: it reads the
// documents on the first call, and again only while no read has succeeded
// (at most once per interval, backing off). An error wraps ErrUnreachable.
func (c *Client) Snapshot(ctx context.Context) (*Snapshot, error) {
	return c.load(ctx, false)
}

// Refresh reads the documents again, unless the last read ended less than
// MinRefreshInterval ago (or less than the backoff after failures): then
// it returns the Snapshot at hand without a request. One early Refresh is
// allowed after each good read that was not itself early. A failed read keeps
// the last good Snapshot, which it returns; the error (wrapping
// ErrUnreachable) comes only when there is none.
func (c *Client) Refresh(ctx context.Context) (*Snapshot, error) {
	return c.load(ctx, true)
}

// load returns the Snapshot at hand, reading first if there is none or if
// refresh asks for it, when the interval allows.
func (c *Client) load(ctx context.Context, refresh bool) (*Snapshot, error) {
	snap, _, err := c.loadRead(ctx, refresh)
	return snap, err
}

// loadRead is load, and whether this call read the documents itself. A
// call that joins another's read did not: that read may have begun before
// what the caller looks for existed.
func (c *Client) loadRead(ctx context.Context, refresh bool) (*Snapshot, bool, error) {
	c.mu.Lock()
	if c.snap != nil && !refresh { // the Snapshot at hand, even while a Refresh reads
		defer c.mu.Unlock()
		return c.snap, false, nil
	}
	if ch := c.reading; ch != nil { // share the read in progress
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, false, fmt.Errorf("%w: %w", ErrUnreachable, ctx.Err())
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		snap, err := c.resultLocked()
		return snap, false, err
	}
	due := c.readAt.IsZero() || c.now().Sub(c.readAt) >= c.wait
	early := !due && refresh && c.early && c.err == nil
	if !due && !early {
		defer c.mu.Unlock()
		snap, err := c.resultLocked()
		return snap, false, err
	}
	credit := c.early
	c.early = false
	ch := make(chan struct{})
	c.reading = ch
	c.mu.Unlock()

	snap, err := c.read(ctx)

	c.mu.Lock()
	defer c.mu.Unlock()
	c.reading = nil
	close(ch)
	cancelled := err != nil && ctx.Err() != nil
	c.recordLocked(snap, err, cancelled)
	if cancelled {
		c.early = credit // a read cut short spends nothing
	} else {
		c.early = due && err == nil
	}
	snap, err = c.resultLocked()
	return snap, true, err
}

// recordLocked keeps the outcome of a read and sets the wait before the
// next: the minimum after a success, doubled after each failure. A read
// cut short by its caller's context says nothing about the server, and
// changes nothing.
func (c *Client) recordLocked(snap *Snapshot, err error, cancelled bool) {
	if err != nil && cancelled {
		if c.snap == nil {
			c.err = err
		}
		return
	}
	c.readAt = c.now()
	if err != nil {
		c.err = err
		c.wait = min(max(2*c.wait, c.opts.minInterval()), c.opts.maxInterval())
		return
	}
	c.snap, c.err, c.wait = snap, nil, c.opts.minInterval()
}

func (c *Client) resultLocked() (*Snapshot, error) {
	if c.snap != nil {
		return c.snap, nil
	}
	if c.err == nil { // a read joined, then cancelled before it began
		return nil, fmt.Errorf("%w: no read has completed", ErrUnreachable)
	}
	return nil, c.err
}
