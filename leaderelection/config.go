package leaderelection

import (
	"errors"
	"fmt"
	"time"
)

// client-go's defaults, which most controllers run with.
const (
	// DefaultLeaseDuration is how long a follower waits, on its own clock,
	// after it last saw the lease record change before it may take the
	// lease.
	DefaultLeaseDuration = 15 * time.Second
	// DefaultRenewDeadline is how long a leader keeps its authority after
	// sending its last successful renew.
	DefaultRenewDeadline = 10 * time.Second
	// DefaultRetryPeriod is the time between two attempts to acquire or
	// renew. A follower waits a random time between half of it and all of
	// it (client-go stretches it up to 2.2 times instead), so that
	// candidates do not retry in step and a released lease is taken
	// within one RetryPeriod.
	DefaultRetryPeriod = 2 * time.Second
)

// ErrInvalidConfig is wrapped by Config.Validate's errors.
var ErrInvalidConfig = errors.New("leaderelection: invalid config")

// Config holds the timing and identity of one candidate. The zero value of
// each duration means its default; Identity is required.
type Config struct {
	// Identity names this candidate in the lease's holderIdentity. It must
	// be unique in the fleet (a pod name, host name plus a random suffix):
	// two candidates with one identity both believe they hold the lease.
	Identity string
	// LeaseDuration is how long, after a follower last saw the record
	// change, it waits before taking the lease. It must exceed
	// RenewDeadline by more than the clock drift can eat (see the package
	// doc for the bound).
	LeaseDuration time.Duration
	// RenewDeadline ends a leader's authority: the send time of its last
	// successful renew plus RenewDeadline. It must exceed RetryPeriod, so
	// that a leader tries more than once before it steps down.
	RenewDeadline time.Duration
	// RetryPeriod is the time between a leader's renews; a follower
	// retries after a random time between half of it and all of it, and at
	// the latest when the lease it watches expires.
	RetryPeriod time.Duration
}

// WithDefaults returns c with every zero duration set to its default.
func (c Config) WithDefaults() Config {
	if c.LeaseDuration == 0 {
		c.LeaseDuration = DefaultLeaseDuration
	}
	if c.RenewDeadline == 0 {
		c.RenewDeadline = DefaultRenewDeadline
	}
	if c.RetryPeriod == 0 {
		c.RetryPeriod = DefaultRetryPeriod
	}
	return c
}

// Validate checks c after WithDefaults: a non-empty identity and
// LeaseDuration > RenewDeadline > RetryPeriod > 0, without which the
// guarantee in the package doc does not hold.
func (c Config) Validate() error {
	c = c.WithDefaults()
	switch {
	case c.Identity == "":
		return fmt.Errorf("%w: Identity is empty", ErrInvalidConfig)
	case c.LeaseDuration <= c.RenewDeadline:
		return fmt.Errorf("%w: LeaseDuration %v must exceed RenewDeadline %v", ErrInvalidConfig, c.LeaseDuration, c.RenewDeadline)
	case c.RetryPeriod <= 0:
		return fmt.Errorf("%w: RetryPeriod %v must be positive", ErrInvalidConfig, c.RetryPeriod)
	case c.RenewDeadline <= c.RetryPeriod:
		return fmt.Errorf("%w: RenewDeadline %v must exceed RetryPeriod %v", ErrInvalidConfig, c.RenewDeadline, c.RetryPeriod)
	}
	return nil
}
