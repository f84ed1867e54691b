package sharding

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed31a95821/informer/metrics"
	"github.com/seed31a95821/informer/workqueue"
)

// TestCoordinatorReportsShardsOwned: with Options.Metrics, a running
// Coordinator reports informer_shard_owned for every shard, 1 for those it
// holds, and nothing once Run has returned.
func TestCoordinatorReportsShardsOwned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := new(metrics.Registry)
		c, err := New(Options{Identity: "a", Shards: 3, Group: &MemoryGroup{},
			Queue: workqueue.New(workqueue.Options[string]{}), Metrics: reg, Exists: func(string) bool { return true }})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { c.Run(ctx); close(done) }()
		time.Sleep(10 * time.Second) // alone, it takes every shard
		synctest.Wait()
		owned := map[string]float64{}
		for _, f := range reg.Gather() {
			if f.Desc == metrics.ShardOwned {
				for _, s := range f.Samples {
					owned[s.LabelValues[0]] = s.Value
				}
			}
		}
		require.Equal(t, map[string]float64{"0": 1, "1": 1, "2": 1}, owned)
		cancel()
		<-done
		for _, f := range reg.Gather() {
			require.NotEqual(t, metrics.ShardOwned, f.Desc, "nothing once Run has returned")
		}
	})
}
