package discovery_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a goroutine (a connection of the shared
// rest.Client, a test server's) outlives the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
