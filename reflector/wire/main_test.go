package wire

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any goroutine (a watch decoder, a transport
// connection) is still running after all tests: nothing may outlive Stop,
// context cancellation or Close.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
