package wire

import (
	"testing"

	"go.uber.org/goleak"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer/apiresource"
)

// TestMain fails the package if any goroutine (a watch decoder, a transport
// connection) is still running after all tests: nothing may outlive Stop,
// context cancellation or Close.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// NewScheme is apiresource.NewScheme, for this package's internal tests. It
// exists in test builds only: the package's API has no scheme constructor
// of its own.
func NewScheme() *runtime.Scheme { return apiresource.NewScheme() }
