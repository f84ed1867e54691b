package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/seed31a95821/informer/fakeapi"
)

// The demo prints "churn N writes/s": a second of ticks must make N
// writes, for rates that are not multiples of the tick rate too.
func TestChurnMakesTheWritesPerSecondItReports(t *testing.T) {
	for _, perSecond := range []int{1, 50, 150, 300, 1234} {
		t.Run(fmt.Sprint(perSecond), func(t *testing.T) {
			c := newChurn(nil, nil, perSecond, 1)
			writes := 0
			for n := range 100 * 3 { // three seconds of 10ms ticks
				w := c.writesAtTick(n)
				require.LessOrEqual(t, w, perSecond/100+1, "tick %d: writes spread evenly", n)
				writes += w
				if n%100 == 99 {
					require.Equal(t, perSecond*(n+1)/100, writes, "after tick %d", n)
				}
			}
		})
	}
}

// The demo runs until Ctrl-C: its churn must not grow the cluster without
// end, or an hour of it would leave a hundred thousand pods. As many pods
// must come as go, so that what churn created stays a small random walk
// around zero, and the server must hold exactly the seeded pods plus those.
func TestChurnKeepsTheClusterSize(t *testing.T) {
	srv, err := fakeapi.NewServer(fakeapi.Options{})
	require.NoError(t, err)
	defer srv.Close()
	namespaces := []string{"shop", "ops"}
	const seeded, steps = 100, 10000
	require.NoError(t, srv.SeedPods(namespaces, seeded))
	seed := time.Now().UnixNano()
	t.Logf("churn seed %d", seed)
	c := newChurn(srv, namespaces, 0, seed)
	for range steps {
		c.step()
	}
	// With creates and deletes equally likely, 3,000 of the 10,000 writes
	// walk the count up or down by one: it strays a few hundred at most
	// (600 is more than ten standard deviations). Twice as many creates
	// as deletes would leave about 1,000.
	t.Logf("after %d writes churn has created %d pods more than it deleted", steps, len(c.created))
	require.Less(t, len(c.created), 600, "pods churn created and did not delete")
	pods, err := srv.Objects(corev1.SchemeGroupVersion.WithResource("pods"))
	require.NoError(t, err)
	require.Len(t, pods, seeded+len(c.created))
}
