package reflector

import (
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Tests that need the reflector's insides (its alarm, its timers), run in
// testing/synctest bubbles. No network, no sleeping on the wall's time. The
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

// With the watchdog off (a negative factor), a watch arms no watchdog
// timer: its alarm holds none and never rings, however long the watch is
// silent. The default factor's alarm is shown to ring, so the test can
// fail. (That the watchdog acts, and that a silent watch is left alone
// when it is off, watchdog.txt shows from outside.)
func TestWatchdogOffArmsNoTimer(t *testing.T) {
	for _, tc := range []struct {
		factor float64
		rings  int
	}{{-1, 0}, {0, 1}} { // 0: the default factor
		t.Run(fmt.Sprint(tc.factor), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				limit := Options{Tunables: Tunables{StuckWatchFactor: tc.factor}}.withDefaults().stuckWatchLimit()
				var rings atomic.Int64
				dog := newQuietAlarm(limit, func() { rings.Add(1) })
				defer dog.stop()
				assert.Equal(t, tc.rings == 0, dog.t == nil, "a timer armed")
				advance(limit/quietTicks + time.Nanosecond)
				assert.Equal(t, int64(tc.rings), rings.Load())
				advance(time.Hour)
				assert.Equal(t, int64(tc.rings), rings.Load(), "the tick is re-armed only by the loop that serves it")
			})
		})
	}
}
