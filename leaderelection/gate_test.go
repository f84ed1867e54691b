package leaderelection

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// Workers wait at a closed gate, enter when a term opens, and the term's
// Lead returns only after the last worker in it has left.
func TestGateHoldsTermUntilWorkersLeave(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g Gate
		require.False(t, g.Leading())
		var entered atomic.Int32
		release := make(chan struct{})
		workerDone := make(chan struct{})
		go func() {
			defer close(workerDone)
			term, leave, err := g.Enter(t.Context())
			if err != nil {
				return
			}
			entered.Add(1)
			<-term.Done()
			<-release // an in-flight reconcile that finishes after the term ended
			leave()
		}()
		synctest.Wait()
		require.Zero(t, entered.Load(), "the gate is closed before a term")

		termCtx, endTerm := context.WithCancel(t.Context())
		leadDone := make(chan struct{})
		go func() { defer close(leadDone); g.Lead(termCtx) }()
		synctest.Wait()
		require.Equal(t, int32(1), entered.Load())
		require.True(t, g.Leading())

		endTerm()
		synctest.Wait()
		require.False(t, g.Leading())
		select {
		case <-leadDone:
			t.Fatal("Lead returned while a worker was still inside the term")
		default:
		}
		close(release)
		<-leadDone
		<-workerDone
	})
}

func TestGateEnterCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g Gate
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		_, _, err := g.Enter(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})
}
