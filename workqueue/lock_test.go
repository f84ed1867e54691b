package workqueue

import (
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// TestParkingLockExcludes has eight goroutines take the lock in turn many
// times; each writes its name to a plain variable under the lock, counts,
// and reads the name back. Were two ever inside at once, a goroutine would
// read another's name, the race detector would report the plain variables
// (nothing but the lock orders them), and increments would be lost.
func TestParkingLockExcludes(t *testing.T) {
	var l parkingLock
	l.setUp()
	const goroutines, rounds = 8, 20_000
	holder, count := -1, 0
	var overlaps atomic.Int32
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for range rounds {
				l.Lock()
				holder = g
				count++
				if holder != g {
					overlaps.Add(1)
				}
				l.Unlock()
			}
		})
	}
	wg.Wait()
	require.Zero(t, overlaps.Load(), "two goroutines held the lock at once")
	require.Equal(t, goroutines*rounds, count)
	require.Equal(t, unlocked, l.state.Load())
}

// An Unlock of a lock nobody holds is a bug in the queue: it would let a
// second caller in while the first still holds it. It panics, as
// sync.Mutex's fatal error does.
func TestParkingLockUnlockOfUnlockedPanics(t *testing.T) {
	var l parkingLock
	l.setUp()
	require.Panics(t, l.Unlock)
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
		require.Equal(t, locked|sleepers, l.state.Load(), "a sleeper must mark the lock as having sleepers")
		require.Zero(t, got)
		l.Unlock()
		wg.Wait()
		require.Equal(t, 3, got)
		require.Equal(t, unlocked, l.state.Load())
	})
}

// TestParkingLockStarvingSleeperGoesFirst: a sleeper that is woken but
// finds the lock taken again, after waiting over starveAfter, marks the
// lock starving; from then on a caller that has not slept may not take the
// free lock ahead of it. The test wakes the sleeper while still holding the
// lock (what an Unlock and a faster caller's Lock amount to), then unlocks
// and at once comes for the lock again: it must get it second.
func TestParkingLockStarvingSleeperGoesFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var l parkingLock
		l.setUp()
		var order []string
		l.Lock()
		var wg sync.WaitGroup
		wg.Go(func() {
			l.Lock()
			order = append(order, "sleeper")
			l.Unlock()
		})
		synctest.Wait() // asleep
		time.Sleep(2 * starveAfter)
		l.wake <- struct{}{} // woken, and beaten: the lock is still held
		synctest.Wait()
		require.Equal(t, locked|sleepers|starving, l.state.Load(), "the beaten sleeper must be starving")
		l.Unlock()
		l.Lock() // may not barge: sleeps until the sleeper has had its turn
		order = append(order, "barger")
		l.Unlock()
		wg.Wait()
		require.Equal(t, []string{"sleeper", "barger"}, order)
		require.Equal(t, unlocked, l.state.Load(), "starving is cleared by the sleeper that set it")
	})
}
