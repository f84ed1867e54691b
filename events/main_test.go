package events_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if Run, or a connection it opened, outlives
// its context.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
