package workqueue_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"golang.org/x/time/rate"

	"github.com/seed31a95821/informer/workqueue"
)

func TestItemExponential(t *testing.T) {
	var r workqueue.ItemExponential[string] // zero value: client-go's 5ms..1000s
	want := []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond}
	for i, w := range want {
		assert.Equal(t, w, r.When("a"), "failure %d", i+1)
	}
	assert.Equal(t, 5*time.Millisecond, r.When("b"), "items back off separately")
	assert.Equal(t, 4, r.NumRequeues("a"))
	for range 100 {
		r.When("a")
	}
	assert.Equal(t, 1000*time.Second, r.When("a"), "capped, without overflow")
	r.Forget("a")
	assert.Equal(t, 0, r.NumRequeues("a"))
	assert.Equal(t, 5*time.Millisecond, r.When("a"))
}

func TestBucketAndMaxOf(t *testing.T) {
	bucket := &workqueue.Bucket[string]{Limiter: rate.NewLimiter(1, 2)}
	m := &workqueue.MaxOf[string]{Limiters: []workqueue.RateLimiter[string]{
		&workqueue.ItemExponential[string]{BaseDelay: time.Millisecond, MaxDelay: time.Hour},
		bucket,
	}}
	assert.Equal(t, time.Millisecond, m.When("a"), "burst token: the item's own backoff rules")
	assert.Equal(t, time.Millisecond, m.When("b"))
	d := m.When("c") // the bucket is empty: about a second to the next token
	assert.Greater(t, d, 900*time.Millisecond)
	assert.LessOrEqual(t, d, time.Second)
	assert.Equal(t, 1, m.NumRequeues("a"))
	m.Forget("a")
	assert.Equal(t, 0, m.NumRequeues("a"))
	assert.Equal(t, 0, bucket.NumRequeues("c"), "a bucket counts nothing per item")
}

func TestDefaultRateLimiter(t *testing.T) {
	r := workqueue.DefaultRateLimiter[string]()
	assert.Equal(t, workqueue.DefaultBaseDelay, r.When("a"))
	assert.Equal(t, 2*workqueue.DefaultBaseDelay, r.When("a"))
	// The other 98 tokens of the burst of 100 go at once; the 101st waits
	// for the 10-per-second refill.
	for i := range 98 {
		r.When(string(rune('b' + i)))
	}
	assert.Greater(t, r.When("z0"), 50*time.Millisecond)
}

// A backoff that reaches the largest Duration stays there: 2^63 ns is one
// past it, and a float that large converted to a Duration wraps to a
// negative delay, which AddAfter takes as "now".
func TestItemExponentialAtTheLargestDuration(t *testing.T) {
	r := &workqueue.ItemExponential[string]{BaseDelay: 1, MaxDelay: math.MaxInt64}
	prev := time.Duration(0)
	for i := range 70 {
		d := r.When("a")
		assert.GreaterOrEqual(t, d, prev, "failure %d", i+1)
		prev = d
	}
	assert.Equal(t, time.Duration(math.MaxInt64), prev)
}
