package reflector

import (
	"math"
	"time"
)

// Backoff configures how long the reflector waits before it retries after a
// failure. The zero value means client-go's figures: from 800ms, doubling,
// capped at 30s, fully jittered, and back to 800ms after two minutes without
// failure.
//
// It is built from three small pieces, each a pure function that the tests
// check on its own:
//
//   - ceiling: the exponential growth, Initial x Factor^n capped at Max;
//   - jitter: where in [ceiling x (1-Jitter), ceiling] the delay falls;
//   - reset: after ResetAfter of quiet, the next failure starts over.
//
// Why jitter at all: when an API server restarts, every client sees the
// failure at the same instant. Without jitter they would all retry at the
// same instants too, and hit the server in synchronised waves. Full jitter
// (AWS's name for "anywhere between zero and the ceiling") spreads them
// evenly. client-go draws from [d, 2d) instead; both keep clients apart, full
// jitter with half the mean wait.
type Backoff struct {
	// Initial is the ceiling for the first retry. Default 800ms.
	Initial time.Duration
	// Max caps the ceiling. Default 30s.
	Max time.Duration
	// Factor multiplies the ceiling after each consecutive failure. Default 2.
	Factor float64
	// Jitter is the random fraction of each delay: the delay is drawn from
	// [ceiling x (1-Jitter), ceiling]. 0 means the default, 1 (full jitter);
	// a negative value turns jitter off (delays equal the ceiling).
	Jitter float64
	// ResetAfter is how long the reflector must go without a failure for
	// the next one to start over from Initial. Default 2 minutes.
	ResetAfter time.Duration
}

// Client-go's figures (tools/cache/reflector.go), kept as defaults.
const (
	defaultBackoffInitial = 800 * time.Millisecond
	defaultBackoffMax     = 30 * time.Second
	defaultBackoffFactor  = 2.0
	defaultBackoffJitter  = 1.0
	defaultBackoffReset   = 2 * time.Minute
)

// withDefaults fills the zero fields.
func (b Backoff) withDefaults() Backoff {
	if b.Initial <= 0 {
		b.Initial = defaultBackoffInitial
	}
	if b.Max <= 0 {
		b.Max = defaultBackoffMax
	}
	if b.Max < b.Initial {
		b.Max = b.Initial
	}
	if b.Factor < 1 {
		// A factor below 1 would shrink the delay as failures pile up.
		b.Factor = defaultBackoffFactor
	}
	switch {
	case b.Jitter == 0:
		b.Jitter = defaultBackoffJitter
	case b.Jitter < 0:
		b.Jitter = 0
	case b.Jitter > 1:
		b.Jitter = 1
	}
	if b.ResetAfter <= 0 {
		b.ResetAfter = defaultBackoffReset
	}
	return b
}

// ceiling returns the un-jittered delay before retry number attempt
// (0 for the first retry).
func (b Backoff) ceiling(attempt int) time.Duration {
	d := float64(b.Initial) * math.Pow(b.Factor, float64(attempt))
	if d >= float64(b.Max) || math.IsInf(d, 0) || math.IsNaN(d) {
		return b.Max
	}
	return time.Duration(d)
}

// jitter places the delay below the ceiling; u is uniform in [0, 1).
// With full jitter the delay is in (0, ceiling]: never exactly zero, so
// a retry always yields to the scheduler and the server.
func (b Backoff) jitter(ceiling time.Duration, u float64) time.Duration {
	return ceiling - time.Duration(b.Jitter*u*float64(ceiling))
}

// backoffState is the mutable half of a backoff: how many failures in a row,
// and when the reflector last came out of a wait.
//
// Not safe for concurrent use: it belongs to the goroutine running the
// reflector.
type backoffState struct {
	cfg     Backoff   // defaulted
	attempt int       // consecutive failures since the last reset
	quietAt time.Time // when the last wait ended; zero before any failure
}

// maxAttempt bounds the exponent: the ceiling has long reached Max by then,
// and the counter must not overflow during a week-long outage.
const maxAttempt = 64

// maxRetryAfter caps the wait a server can impose with Retry-After. A real
// API server asks for seconds; one asking for hours is broken or hostile,
// and obeying it would leave the cache stale for that long.
const maxRetryAfter = 10 * time.Minute

// next returns the delay before the next retry. now is the current time,
// u a uniform draw in [0, 1), and floor a minimum imposed by the server
// (Retry-After, honoured up to maxRetryAfter), 0 if none.
func (s *backoffState) next(now time.Time, u float64, floor time.Duration) time.Duration {
	floor = min(floor, maxRetryAfter)
	// "Reset after two minutes of health": count from the end of the last
	// wait, the moment the reflector went back to work. If it has worked
	// that long without failing, the failure at hand is a new incident.
	if !s.quietAt.IsZero() && now.Sub(s.quietAt) >= s.cfg.ResetAfter {
		s.attempt = 0
	}
	d := s.cfg.jitter(s.cfg.ceiling(s.attempt), u)
	if d < floor {
		d = floor
	}
	if s.attempt < maxAttempt {
		s.attempt++
	}
	s.quietAt = now.Add(d)
	return d
}

// probe returns the wait before a probe of a resource the server does not
// serve (KindNotServed): Max, plus up to Max x Jitter more. The jitter
// matters here as much as after a restart: a server that stops serving a
// resource ends every client's watch at one instant, and without it the
// whole fleet would probe in step, for as long as the resource is gone.
// It counts as a failure for the next backoff, as a wait that ended at
// now plus the delay.
func (s *backoffState) probe(now time.Time, u float64) time.Duration {
	d := 2*s.cfg.Max - s.cfg.jitter(s.cfg.Max, u)
	if s.attempt < maxAttempt {
		s.attempt++
	}
	s.quietAt = now.Add(d)
	return d
}
