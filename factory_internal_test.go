package informer

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/seed31a95821/informer/reflector/wire"
)

// Every informer of a factory draws from one rate limiter: the one the
// Config carries, or one NewFactory builds from QPS and Burst.
func TestFactorySharesOneRateLimiter(t *testing.T) {
	f := NewFactory(wire.Config{Host: "http://127.0.0.1:1", QPS: 7, Burst: 3}, FactoryOptions{})
	if assert.NotNil(t, f.cfg.RateLimiter) {
		assert.InDelta(t, 7, float64(f.cfg.RateLimiter.Limit()), 1e-9)
		assert.Equal(t, 3, f.cfg.RateLimiter.Burst())
	}
	given := wire.NewRateLimiter(wire.Config{})
	f = NewFactory(wire.Config{Host: "http://127.0.0.1:1", RateLimiter: given}, FactoryOptions{})
	assert.Same(t, given, f.cfg.RateLimiter, "a limiter the caller shares is kept")
	f = NewFactory(wire.Config{Host: "http://127.0.0.1:1", QPS: -1}, FactoryOptions{})
	assert.Nil(t, f.cfg.RateLimiter, "negative QPS: no limit")
}
