package workqueue

import (
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
)

// TestParkingLockExcludes has eight goroutines take the lock in turn many
// times and change a plain counter under it: were two ever inside at once,
// the in-lock count would see it, the race detector would report the
// counter, and increments would be lost.
func TestParkingLockExcludes(t *testing.T) {
	var l parkingLock
	l.setUp()
	const goroutines, rounds = 8, 20_000
	var inside atomic.Int32
	var overlaps atomic.Int32
	count := 0
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range rounds {
				l.Lock()
				if inside.Add(1) != 1 {
					overlaps.Add(1)
				}
				count++
				inside.Add(-1)
				l.Unlock()
			}
		})
	}
	wg.Wait()
	require.Zero(t, overlaps.Load(), "two goroutines held the lock at once")
	require.Equal(t, goroutines*rounds, count)
	require.Equal(t, unlocked, l.state.Load())
}

// TestParkingLockWakesSleepers holds the lock while three goroutines come
// for it, waits until all three sleep, and releases it: each Unlock must
// wake the next sleeper, so all three get it in turn. Were a wake-up lost,
// a sleeper would sleep for ever and synctest would report the deadlock.
func TestParkingLockWakesSleepers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var l parkingLock
		l.setUp()
		l.Lock()
		got := 0
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				l.Lock()
				got++
				l.Unlock()
			})
		}
		synctest.Wait() // all three asleep in wake
		require.Equal(t, contended, l.state.Load(), "a sleeper must mark the lock contended")
		require.Zero(t, got)
		l.Unlock()
		wg.Wait()
		require.Equal(t, 3, got)
		require.Equal(t, unlocked, l.state.Load())
	})
}
