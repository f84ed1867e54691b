package workqueue_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a goroutine outlives the tests: the queue
// starts none of its own, and its one timer's function must have returned.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
