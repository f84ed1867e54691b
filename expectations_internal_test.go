package informer

import (
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

type appliedAt string

func (a appliedAt) AppliedResourceVersion() string { return string(a) }

// TestExpectationsForgetWhatNobodyAsksFor: expectations of keys never
// consulted again (their objects deleted, say) are swept once past their
// deadline, so a long-running controller's map does not grow with churn.
func TestExpectationsForgetWhatNobodyAsksFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		exp := NewExpectations(appliedAt("1"), time.Minute)
		for i := range 1000 {
			exp.Expect("gone-"+strconv.Itoa(i), "5")
		}
		time.Sleep(2 * time.Minute)
		for i := range 1000 {
			exp.Expect("live-"+strconv.Itoa(i), "5")
		}
		exp.mu.Lock()
		defer exp.mu.Unlock()
		require.LessOrEqual(t, len(exp.pending), 1000, "the expired ones are gone")
		require.Contains(t, exp.pending, "live-999")
	})
}
