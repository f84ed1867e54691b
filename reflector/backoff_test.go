package reflector

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBackoffDefaults(t *testing.T) {
	b := Backoff{}.withDefaults()
	assert.Equal(t, Backoff{Initial: 800 * time.Millisecond, Max: 30 * time.Second, Factor: 2, Jitter: 1, ResetAfter: 2 * time.Minute}, b)
	assert.Equal(t, 0.0, Backoff{Jitter: -1}.withDefaults().Jitter, "negative turns jitter off")
	assert.Equal(t, 2.0, Backoff{Factor: 0.5}.withDefaults().Factor, "a shrinking backoff is refused")
	assert.Equal(t, time.Minute, Backoff{Initial: time.Minute, Max: time.Second}.withDefaults().Max)
}

func TestBackoffCeiling(t *testing.T) {
	b := Backoff{}.withDefaults()
	want := []time.Duration{800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond,
		6400 * time.Millisecond, 12800 * time.Millisecond, 25600 * time.Millisecond, 30 * time.Second, 30 * time.Second}
	for i, w := range want {
		assert.Equal(t, w, b.ceiling(i), "attempt %d", i)
	}
	assert.Equal(t, 30*time.Second, b.ceiling(maxAttempt))
	assert.Equal(t, 30*time.Second, b.ceiling(10000), "no overflow")
}

func TestBackoffJitterBounds(t *testing.T) {
	full := Backoff{}.withDefaults()
	assert.Equal(t, time.Second, full.jitter(time.Second, 0), "u=0: the ceiling")
	assert.Equal(t, 250*time.Millisecond, full.jitter(time.Second, 0.75))
	assert.Greater(t, full.jitter(time.Second, 0.999999), time.Duration(0), "never zero")

	half := Backoff{Jitter: 0.5}.withDefaults()
	assert.Equal(t, 750*time.Millisecond, half.jitter(time.Second, 0.5))
	none := Backoff{Jitter: -1}.withDefaults()
	assert.Equal(t, time.Second, none.jitter(time.Second, 0.9))
}

func TestBackoffSequenceStaysUnderCeilingAndSpreads(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed=%d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	cfg := Backoff{}.withDefaults()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var sum time.Duration
	const runs = 2000
	for run := 0; run < runs; run++ {
		s := backoffState{cfg: cfg}
		for i := 0; i < 8; i++ {
			d := s.next(now, rng.Float64(), 0)
			require.Greater(t, d, time.Duration(0))
			require.LessOrEqual(t, d, cfg.ceiling(i), "attempt %d", i)
			if i == 7 {
				sum += d
			}
			now = now.Add(d) // retried at once, failed at once
		}
	}
	// Full jitter: the mean is half the ceiling (30s). A loose bound: with
	// 2000 draws the sample mean is within 1.5s of 15s with overwhelming
	// probability; a jitter stuck at one end would miss it by far.
	mean := sum / runs
	assert.InDelta(t, float64(15*time.Second), float64(mean), float64(1500*time.Millisecond))
}

func TestBackoffResetAfterQuiet(t *testing.T) {
	cfg := Backoff{Jitter: -1}.withDefaults()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := backoffState{cfg: cfg}
	assert.Equal(t, 800*time.Millisecond, s.next(now, 0.5, 0))
	now = now.Add(800 * time.Millisecond)
	assert.Equal(t, 1600*time.Millisecond, s.next(now, 0.5, 0))
	now = now.Add(1600 * time.Millisecond)

	// Worked for just under two minutes, then failed: still escalating.
	now = now.Add(2*time.Minute - time.Millisecond)
	assert.Equal(t, 3200*time.Millisecond, s.next(now, 0.5, 0))
	now = now.Add(3200 * time.Millisecond)

	// Two full minutes of health: start over.
	now = now.Add(2 * time.Minute)
	assert.Equal(t, 800*time.Millisecond, s.next(now, 0.5, 0))
}

func TestBackoffFloorFromRetryAfter(t *testing.T) {
	cfg := Backoff{}.withDefaults()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := backoffState{cfg: cfg}
	assert.Equal(t, 7*time.Second, s.next(now, 0.1, 7*time.Second), "the server's Retry-After wins")
	assert.Equal(t, now.Add(7*time.Second), s.quietAt, "health is counted from the end of the real wait")
	assert.Equal(t, 1, s.attempt)
}

// A server may ask for any Retry-After (a Status carries it as an int32 of
// seconds): a broken or hostile one asking for years must not park the
// reflector for years. The request is honoured up to maxRetryAfter.
func TestBackoffRetryAfterIsCapped(t *testing.T) {
	cfg := Backoff{}.withDefaults()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := backoffState{cfg: cfg}
	years := time.Duration(math.MaxInt32) * time.Second
	assert.Equal(t, maxRetryAfter, s.next(now, 0.1, years))
	assert.Equal(t, 3*time.Minute, s.next(now, 0.1, 3*time.Minute), "a long but sane request is honoured")
}

// TestProbeWaitIsMaxJitteredUpward: a resource that is not served is
// probed every Backoff.Max, spread up to twice that by the jitter, and
// exactly Max with jitter off.
func TestProbeWaitIsMaxJitteredUpward(t *testing.T) {
	s := backoffState{cfg: Backoff{}.withDefaults()}
	now := time.Unix(0, 0)
	require.Equal(t, 30*time.Second, s.probe(now, 0))
	require.Equal(t, 45*time.Second, s.probe(now, 0.5))
	require.InDelta(t, float64(60*time.Second), float64(s.probe(now, 0.999999)), float64(time.Millisecond))
	off := backoffState{cfg: Backoff{Jitter: -1}.withDefaults()}
	require.Equal(t, 30*time.Second, off.probe(now, 0.7))
}
