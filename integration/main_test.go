package integration

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any goroutine is still running after all
// tests: the reflectors, informers, fake servers and proxies the scenarios
// start must all be gone by then, including in the tests that do not check
// it one by one.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
