package informer

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

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

// A factory asks its ListerWatchers to skip managedFields while decoding
// (wire.Options.DropManagedFields) when, and only when, its informers'
// Transform declares it drops them, as StripManagedFields does.
func TestFactoryDropsManagedFieldsWhileDecodingOnlyForStripManagedFields(t *testing.T) {
	drops := func(tr Transform) bool {
		return newInformer[*corev1.Pod](Options{Transform: tr}, allFastPaths()).decoders().dropManagedFields
	}
	assert.True(t, drops(StripManagedFields()))
	assert.False(t, drops(Transform{}))
	keep := func(o runtime.Object) (runtime.Object, error) { return o, nil }
	assert.False(t, drops(Transform{Func: keep, SetsFieldsOnly: true}))
}
