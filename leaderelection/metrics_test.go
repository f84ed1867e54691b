package leaderelection

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed31a95821/informer/metrics"
)

// gauge returns the samples of d in reg, by their first label value.
func gauge(reg *metrics.Registry, d *metrics.Desc) map[string]float64 {
	got := map[string]float64{}
	for _, f := range reg.Gather() {
		if f.Desc == d {
			for _, s := range f.Samples {
				got[s.LabelValues[0]] = s.Value
			}
		}
	}
	return got
}

// TestElectorReportsLeaderStatus: with Options.Metrics, a running Elector
// reports leader_election_master_status, 1 while it leads and 0 once it
// has lost the lease, and nothing once Run has returned.
func TestElectorReportsLeaderStatus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := new(metrics.Registry)
		store := &candidateStore{MemoryStore: &MemoryStore{Name: "default/ctl"}, unhang: make(chan struct{})}
		e, err := New(Options{Config: Config{Identity: "a"}, Lock: store, Metrics: reg, Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		require.Empty(t, gauge(reg, metrics.LeaderStatus), "nothing before Run")

		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { e.Run(ctx); close(done) }()
		time.Sleep(time.Second)
		synctest.Wait()
		require.Equal(t, map[string]float64{"default/ctl": 1}, gauge(reg, metrics.LeaderStatus))

		store.down.Store(true) // it cannot renew
		time.Sleep(DefaultRenewDeadline + DefaultRetryPeriod)
		synctest.Wait()
		require.Equal(t, map[string]float64{"default/ctl": 0}, gauge(reg, metrics.LeaderStatus))

		cancel()
		<-done
		require.Empty(t, gauge(reg, metrics.LeaderStatus), "nothing once Run has returned")
	})
}
