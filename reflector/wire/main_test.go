package wire

import (
	"os"
	"testing"

	"go.uber.org/goleak"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer/apiresource"
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

// NewScheme is apiresource.NewScheme, for this package's internal tests. It
// exists in test builds only: the package's API has no scheme constructor
// of its own.
func NewScheme() *runtime.Scheme { return apiresource.NewScheme() }
