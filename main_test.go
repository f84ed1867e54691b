package informer_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any goroutine is still running after all
// tests and examples: nothing an informer or a factory starts may outlive
// Run, Shutdown or the end of its context. (Most tests check this one by
// one as well; the examples cannot, so this is their check.)
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
