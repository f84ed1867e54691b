package sharding

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func members(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprint("replica-", i))
	}
	return out
}

func shares(plan []string) map[string]int {
	out := map[string]int{}
	for _, m := range plan {
		out[m]++
	}
	return out
}

func requireFair(t *testing.T, plan []string, ms []string) {
	t.Helper()
	k, n := len(plan), len(ms)
	got := shares(plan)
	require.NotContains(t, got, "", "every shard has an owner")
	for _, m := range ms {
		require.GreaterOrEqual(t, got[m], k/n, "%s: %v", m, got)
		require.LessOrEqual(t, got[m], (k+n-1)/n, "%s: %v", m, got)
	}
}

func moved(a, b []string) map[int][2]string {
	out := map[int][2]string{}
	for i := range a {
		if a[i] != b[i] {
			out[i] = [2]string{a[i], b[i]}
		}
	}
	return out
}

func TestPlanFairAndStable(t *testing.T) {
	for _, k := range []int{1, 7, 16, 64} {
		for n := 1; n <= 6; n++ {
			ms := members(n)
			p := Plan(make([]string, k), ms)
			requireFair(t, p, ms)
			require.Equal(t, p, Plan(p, ms), "k=%d n=%d: a plan is a fixed point", k, n)
		}
	}
}

// A member joining takes shards only from those over the new share, and
// only as many as its share; a member leaving gives away its own shards
// and nothing else moves.
func TestPlanMovesOnlyWhatMust(t *testing.T) {
	for _, k := range []int{16, 64, 100} {
		for n := 1; n <= 5; n++ {
			ms := members(n)
			before := Plan(make([]string, k), ms)
			joined := append(members(n), "replica-new")
			after := Plan(before, joined)
			requireFair(t, after, joined)
			for s, mv := range moved(before, after) {
				require.Equal(t, "replica-new", mv[1], "k=%d n=%d: shard %d moved %v, not to the joiner", k, n, s, mv)
			}
			require.LessOrEqual(t, len(moved(before, after)), (k+n)/(n+1), "k=%d n=%d", k, n)

			if n == 1 {
				continue
			}
			gone := ms[0]
			left := Plan(before, ms[1:])
			requireFair(t, left, ms[1:])
			for s, mv := range moved(before, left) {
				require.Equal(t, gone, mv[0], "k=%d n=%d: shard %d moved %v, not from the leaver", k, n, s, mv)
			}
		}
	}
}

func TestPlanNoMembers(t *testing.T) {
	require.Equal(t, []string{"", ""}, Plan([]string{"a", "b"}, nil))
}

func TestShardOfSpreads(t *testing.T) {
	counts := make([]int, 8)
	for i := range 8000 {
		counts[ShardOf(fmt.Sprint("ns/key-", i), 8)]++
	}
	for s, c := range counts {
		require.InDelta(t, 1000, c, 200, "shard %d", s)
	}
}
