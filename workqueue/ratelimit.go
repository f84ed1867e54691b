package workqueue

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// RateLimiter decides how long a failed item waits before it is retried.
// Implementations must be safe for concurrent use.
type RateLimiter[T comparable] interface {
	// When returns how long to wait before item is retried, and counts the
	// failure.
	When(item T) time.Duration
	// Forget clears the failures of item: it succeeded.
	Forget(item T)
	// NumRequeues is how many failures of item are counted.
	NumRequeues(item T) int
}

// The defaults of DefaultRateLimiter, which are client-go's.
const (
	DefaultBaseDelay = 5 * time.Millisecond
	DefaultMaxDelay  = 1000 * time.Second
	DefaultQPS       = 10
	DefaultBurst     = 100
)

// DefaultRateLimiter is the limiter a Queue uses unless told otherwise:
// each item backs off exponentially from 5ms to 1000s, and retries of all
// items together are held to 10 per second with bursts of 100. The item's
// own backoff protects the server from one broken object; the overall bucket
// protects it from a thousand objects failing at once.
func DefaultRateLimiter[T comparable]() RateLimiter[T] {
	return &MaxOf[T]{Limiters: []RateLimiter[T]{
		&ItemExponential[T]{BaseDelay: DefaultBaseDelay, MaxDelay: DefaultMaxDelay},
		NewBucket[T](DefaultQPS, DefaultBurst),
	}}
}

// ItemExponential waits BaseDelay * 2^(failures-1) for an item, up to
// MaxDelay. The zero value uses DefaultBaseDelay and DefaultMaxDelay.
type ItemExponential[T comparable] struct {
	BaseDelay time.Duration
	MaxDelay  time.Duration

	mu       sync.Mutex // guards failures
	failures map[T]int
}

// When implements RateLimiter.
func (r *ItemExponential[T]) When(item T) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failures == nil {
		r.failures = map[T]int{}
	}
	n := r.failures[item]
	r.failures[item] = n + 1
	base, maxDelay := r.BaseDelay, r.MaxDelay
	if base <= 0 {
		base = DefaultBaseDelay
	}
	if maxDelay <= 0 {
		maxDelay = DefaultMaxDelay
	}
	// 2^n overflows long before n reaches its int limit: compute in float
	// and cap, as a delay beyond MaxDelay is MaxDelay anyway. At the cap
	// too: float64(math.MaxInt64) is 2^63, one past the largest Duration,
	// and converting it back would wrap to a negative delay.
	d := float64(base) * math.Pow(2, float64(n))
	if d >= float64(maxDelay) {
		return maxDelay
	}
	return time.Duration(d)
}

// Forget implements RateLimiter.
func (r *ItemExponential[T]) Forget(item T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.failures, item)
}

// NumRequeues implements RateLimiter.
func (r *ItemExponential[T]) NumRequeues(item T) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failures[item]
}

// Bucket holds the retries of all items together to a token bucket
// (golang.org/x/time/rate): Limit per second, bursts of Burst. It keeps no
// per-item state, so Forget does nothing and NumRequeues is always 0.
type Bucket[T comparable] struct {
	Limiter *rate.Limiter
}

// NewBucket returns a Bucket of qps tokens per second and burst tokens.
func NewBucket[T comparable](qps float64, burst int) *Bucket[T] {
	return &Bucket[T]{Limiter: rate.NewLimiter(rate.Limit(qps), burst)}
}

// When implements RateLimiter: it takes a token and says how long until the
// token is due.
func (r *Bucket[T]) When(T) time.Duration { return r.Limiter.Reserve().Delay() }

// Forget implements RateLimiter; a bucket has nothing per item to forget.
func (r *Bucket[T]) Forget(T) {}

// NumRequeues implements RateLimiter; a bucket counts nothing per item.
func (r *Bucket[T]) NumRequeues(T) int { return 0 }

// MaxOf combines limiters: an item waits as long as the strictest of them
// says. Every limiter counts every failure.
type MaxOf[T comparable] struct {
	Limiters []RateLimiter[T]
}

// When implements RateLimiter.
func (r *MaxOf[T]) When(item T) time.Duration {
	var longest time.Duration
	for _, l := range r.Limiters {
		longest = max(longest, l.When(item))
	}
	return longest
}

// Forget implements RateLimiter.
func (r *MaxOf[T]) Forget(item T) {
	for _, l := range r.Limiters {
		l.Forget(item)
	}
}

// NumRequeues implements RateLimiter: the largest count of any limiter.
func (r *MaxOf[T]) NumRequeues(item T) int {
	var n int
	for _, l := range r.Limiters {
		n = max(n, l.NumRequeues(item))
	}
	return n
}
