package processor

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func keyed(i int) *Notification { return &Notification{Type: Add, Key: itoaKey(i)} }

func itoaKey(i int) string { return "k" + strconv.Itoa(i) }

// TestBufferFIFOAcrossChunks checks order across many chunk boundaries, with
// pops of every size.
func TestBufferFIFOAcrossChunks(t *testing.T) {
	var b buffer
	const n = chunkLen*5 + 7
	for i := range n {
		b.push(keyed(i))
	}
	require.Equal(t, n, b.len())
	dst := make([]*Notification, 13)
	next := 0
	for b.len() > 0 {
		k := b.popInto(dst)
		require.Positive(t, k)
		for _, e := range dst[:k] {
			require.Equal(t, itoaKey(next), e.Key)
			next++
		}
	}
	require.Equal(t, n, next)
	require.Zero(t, b.popInto(dst), "an empty buffer yields nothing")
}

// TestBufferShrinksAfterBurst is the kubernetes#122067 property: capacity
// follows the backlog up and comes back down once it is drained.
func TestBufferShrinksAfterBurst(t *testing.T) {
	var b buffer
	const burst = 10_000
	for i := range burst {
		b.push(keyed(i))
	}
	require.GreaterOrEqual(t, b.capacity(), burst)
	dst := make([]*Notification, batchLen)
	for b.len() > 0 {
		b.popInto(dst)
	}
	require.LessOrEqual(t, b.capacity(), 2*chunkLen, "drained buffer keeps at most the head chunk and one spare")
	require.Positive(t, b.capacity(), "a drained buffer keeps a chunk to reuse")
}

// TestBufferSteadyStateDoesNotGrow checks that a consumer keeping up with a
// small lag keeps reusing its chunks instead of allocating.
func TestBufferSteadyStateDoesNotGrow(t *testing.T) {
	var b buffer
	dst := make([]*Notification, 1)
	for i := range 100 * chunkLen {
		b.push(keyed(i))
		b.push(keyed(i))
		b.popInto(dst)
		b.popInto(dst)
	}
	require.Equal(t, chunkLen, b.capacity())
	e := keyed(1)
	allocs := testing.AllocsPerRun(1000, func() {
		b.push(e)
		b.popInto(dst)
	})
	require.Zero(t, allocs)
}

// TestBufferPopClearsSlots checks that popped slots no longer reference the
// notification, so the buffer does not keep objects alive.
func TestBufferPopClearsSlots(t *testing.T) {
	var b buffer
	b.push(keyed(1))
	b.push(keyed(2))
	dst := make([]*Notification, 1)
	b.popInto(dst)
	require.Nil(t, b.head.entries[0])
}

// TestBufferMatchesModel pushes and pops at random and compares with a slice.
func TestBufferMatchesModel(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed=%d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	var b buffer
	var model []string
	dst := make([]*Notification, batchLen)
	next := 0
	for step := range 5_000 {
		if rng.IntN(3) > 0 {
			for range rng.IntN(2 * chunkLen) {
				b.push(keyed(next))
				model = append(model, itoaKey(next))
				next++
			}
			continue
		}
		k := b.popInto(dst[:rng.IntN(batchLen)+1])
		for _, e := range dst[:k] {
			if e.Key != model[0] {
				t.Fatalf("step %d: popped %q, want %q", step, e.Key, model[0])
			}
			model = model[1:]
		}
		if b.len() != len(model) {
			t.Fatalf("step %d: len %d, want %d", step, b.len(), len(model))
		}
		// Capacity never exceeds what the backlog needs plus two chunks.
		if b.capacity() > len(model)+3*chunkLen {
			t.Fatalf("step %d: capacity %d for %d entries", step, b.capacity(), len(model))
		}
	}
}

func TestBufferReset(t *testing.T) {
	var b buffer
	for i := range 3 * chunkLen {
		b.push(keyed(i))
	}
	b.reset()
	require.Zero(t, b.len())
	require.Zero(t, b.capacity())
	b.push(keyed(1))
	require.Equal(t, 1, b.len())
}
