package informer

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
)

// SinceAdvanced read coarsely: moves closer together than stampPeriod
// share one reading, so SinceAdvanced may run ahead of the truth by less
// than stampPeriod, never behind it; moves further apart are stamped
// exactly. (Fake time: the clock's timer is the only thing that moves.)
func TestSinceAdvancedErrsStaleByLessThanStampPeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newInformer[*corev1.Pod](Options{Name: "pods"}, allFastPaths())
		defer s.fresh.stopClock()
		assert.Zero(t, s.Freshness().SinceAdvanced, "nothing applied yet")

		s.handed("10", false)
		time.Sleep(stampPeriod / 2)
		s.handed("11", false) // moves now, stamped with the reading at "10"
		got := s.Freshness()
		assert.Equal(t, "11", got.AppliedResourceVersion)
		assert.Equal(t, stampPeriod/2, got.SinceAdvanced, "stale by what passed since the last reading")

		time.Sleep(stampPeriod) // the reading is old now: the next move reads the clock
		s.handed("12", false)
		assert.Zero(t, s.Freshness().SinceAdvanced, "a move after a pause is stamped exactly")
		time.Sleep(time.Minute)
		assert.Equal(t, time.Minute, s.Freshness().SinceAdvanced)
	})
}

// A write the queue applied at once leaves it drained, and the writer no
// longer looks for itself: the reader that asks does. Expectations
// (expectations.go) read AppliedResourceVersion and would otherwise wait
// for the next batch of the consumer, or their timeout.
func TestAppliedResourceVersionSeesAWriteAppliedInline(t *testing.T) {
	s := newInformer[*corev1.Pod](Options{Name: "pods"}, allFastPaths())
	defer s.fresh.stopClock()
	assert.Empty(t, s.AppliedResourceVersion(), "nothing handed yet")
	s.handed("10", false)
	assert.Equal(t, "10", s.AppliedResourceVersion())
	s.handed("12", false)
	assert.Equal(t, "12", s.Freshness().AppliedResourceVersion)
}
