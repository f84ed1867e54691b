package rest

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any goroutine (a watch decoder, a transport
// connection) is still running after all tests: nothing may outlive Stop,
// context cancellation or Close.
//
// Run with fakePluginEnv set, the test binary is the fake exec credential
// plugin of exec_test.go instead: the tests re-execute themselves rather
// than build a program.
func TestMain(m *testing.M) {
	if mode := os.Getenv(fakePluginEnv); mode != "" {
		os.Exit(fakePlugin(mode))
	}
	goleak.VerifyTestMain(m)
}
