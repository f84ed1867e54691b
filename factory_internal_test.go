package informer

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/seed31a95821/informer/rest"
)

// Every informer of a factory draws from one rate limiter: the one the
// Config carries, or one rest.New builds from QPS and Burst, in the one
// rest.Client the factory builds.
func TestFactorySharesOneRateLimiter(t *testing.T) {
	f := NewFactory(rest.Config{Host: "http://127.0.0.1:1", QPS: 7, Burst: 3}, FactoryOptions{})
	if assert.NotNil(t, f.rc.RateLimiter()) {
		assert.InDelta(t, 7, float64(f.rc.RateLimiter().Limit()), 1e-9)
		assert.Equal(t, 3, f.rc.RateLimiter().Burst())
	}
	given := rest.NewRateLimiter(rest.Config{})
	f = NewFactory(rest.Config{Host: "http://127.0.0.1:1", RateLimiter: given}, FactoryOptions{})
	assert.Same(t, given, f.rc.RateLimiter(), "a limiter the caller shares is kept")
	f = NewFactory(rest.Config{Host: "http://127.0.0.1:1", QPS: -1}, FactoryOptions{})
	assert.Nil(t, f.rc.RateLimiter(), "negative QPS: no limit")
}
