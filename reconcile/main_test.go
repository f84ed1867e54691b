package reconcile_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a worker outlives Run.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
