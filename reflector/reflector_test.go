package reflector

import (
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// State-machine tests that need the reflector's insides (its alarm, its
// timers) or a store that holds it up: a real Reflector driven by a
// scripted ListerWatcher and a fake clock. No network, no sleeping. The
// behaviour seen from outside is specified by the scripts in testdata/
// (script_test.go).

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func tooLargeRV() error {
	err := apierrors.NewTimeoutError("Too large resource version", 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{
		Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version",
	}}
	return err
}

func connRefused() error {
	return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
}

func TestUnstructuredExpectedGVK(t *testing.T) {
	obj := func(kind string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind(kind)
		u.SetName("x")
		return u
	}
	tc := newTypeCheck(obj("Pod"))
	_, err := tc.admit(obj("Pod"))
	assert.NoError(t, err)
	_, err = tc.admit(obj("Secret"))
	assert.ErrorIs(t, err, ErrWrongType)
	assert.Equal(t, schema.GroupVersionKind{Version: "v1", Kind: "Pod"}.String(), typeName(obj("Pod")))
	assert.Equal(t, "*v1.Pod", typeName(&corev1.Pod{}))
}

// With the watchdog off, a running watch arms no timer. The state alone
// does not show the watch is being consumed (Watching is entered before
// the watch is opened, and the watchdog armed after): an applied event does.
func TestWatchdogDisabled(t *testing.T) {
	for _, tc := range []struct {
		factor float64
		timers int
	}{{-1, 0}, {0, 1}} { // 0: the default factor, so the harness is shown to see the watchdog
		t.Run(fmt.Sprint(tc.factor), func(t *testing.T) {
			h := start(t, newScriptLW(), Options{WatchList: WatchListOff, StuckWatchFactor: tc.factor})
			fw := watch.NewRaceFreeFake()
			h.sync("10").watch(fw, nil)
			fw.Add(pod("a", "11"))
			h.waitRV("11")
			assert.Len(t, h.clk.pending(), tc.timers)
		})
	}
}
