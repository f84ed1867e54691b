// This file is a fast path: the queue's mutex. To go back to sync.Mutex,
// change the type of Queue.mu to sync.Mutex, delete parkingLock's set-up
// line in Queue.setUp, and delete this file and lock_test.go, its own
// tests; every other test passes either way. What it buys is measured by
// BenchmarkWorkqueue in bench/, with 8 and 64 workers.

package workqueue

import (
	"sync/atomic"
	"time"
)

// parkingLock is the queue's mutex. It differs from sync.Mutex in one
// thing: a caller that finds it held goes to sleep at once, where
// sync.Mutex first spins, trying again and again on its CPU.
//
// Spinning pays when the holder runs on another CPU and will be done
// before the spinner could sleep and wake. The queue holds its lock for a
// few probes, tens of nanoseconds, so spinning looks right; measured, it is
// not. With 8 workers on 2 CPUs, each Add, Get and Done of one CPU took the
// lock, and the lines of memory it guards, from the other: every op moved
// the queue's data between the CPUs' caches, and the two CPUs together
// spent 1,000 ns per add+get+done, 2.5 times client-go's queue (and 13
// times what one worker alone spends).
//
// A sleeper is woken by the Unlock that finds it waiting, and the Go
// scheduler runs a goroutine woken that way next on the waking CPU. So,
// under contention, the workers gather on the CPU that holds the lock and
// take turns there, with the queue's data in that CPU's cache, while the
// other CPU is free for other work: work a controller's workers have
// plenty of between Get and Done. The same load then costs 150 ns per op.
// A lock that is never contended costs what sync.Mutex costs: one
// compare-and-swap to take it and one to release it.
//
// The protocol is the classic one of a futex mutex (Drepper, "Futexes Are
// Tricky"), with sync.Mutex's guard against starvation. state holds three
// bits: locked; sleepers, someone may be asleep; and starving, below. A
// caller that must sleep first sets sleepers, so the holder knows to wake
// one when it unlocks; a woken sleeper sets sleepers again as it takes the
// lock, because others may still be asleep. wake is the sleepers' bed: a
// channel of one token, on which they sleep first come, first woken. An
// Unlock that finds the token already there leaves it: one sleeper will
// wake on it, and the next Unlock wakes the next. A token nobody was
// waiting for costs a later sleeper one extra look at state.
//
// A caller that arrives while the lock is free takes it, even if a woken
// sleeper was about to: that is what keeps the lock on one CPU. But a
// sleeper beaten that way goes back to sleep at the back of the line, and
// under contention that never lets up it could wait without end. So a
// sleeper that is woken and beaten after waiting over starveAfter sets
// starving; while it is set, only callers that have slept may take the
// free lock, and the newcomers sleep behind them, until the starving one
// has its turn and clears it (TestParkingLockStarvingSleeperGoesFirst). So
// the callers that take the lock seldom, the timer moving delayed items
// that fell due, Stats and ShutDownWithDrain, get their turn once the
// sleepers ahead of them have had theirs. The guard is weaker than
// sync.Mutex's in two ways: a beaten sleeper, starving or not, sleeps
// again at the back of the line, where sync.Mutex puts it at the front;
// and it can only set starving once it has run after being woken.
//
// wake is a channel, so a Queue first used inside a testing/synctest
// bubble belongs to that bubble: a contended Lock or an Unlock from outside
// it is a fatal error of the test binary.
//
// Its zero value is not ready: Queue.setUp makes wake. It must not be
// copied after first use.
type parkingLock struct {
	state atomic.Int32 // the bits below
	wake  chan struct{}
}

// The bits of parkingLock.state.
const (
	unlocked int32 = 0
	locked   int32 = 1 << iota // someone holds the lock
	sleepers                   // someone may be asleep in wake
	starving                   // a sleeper has waited too long: no barging
)

// starveAfter is how long a sleeper waits, woken and beaten, before it sets
// starving. sync.Mutex uses the same bound.
const starveAfter = time.Millisecond

// setUp makes the lock ready; Queue.setUp calls it once.
func (l *parkingLock) setUp() { l.wake = make(chan struct{}, 1) }

// Lock takes the lock, sleeping until it is free.
func (l *parkingLock) Lock() {
	if l.state.CompareAndSwap(unlocked, locked) {
		return
	}
	l.lockSlow()
}

// lockSlow is Lock when the lock is held, or a sleeper is starving. A
// caller may take a free lock unless someone is starving; a caller woken
// from wake may take it even then, and only a caller that has slept in
// wake may become starving. The one that takes it sets sleepers, as others
// may still sleep, and, if it was starving, clears starving: any other
// starving sleeper sets it again before it next sleeps.
func (l *parkingLock) lockSlow() {
	woken, hungry := false, false
	var since time.Time
	for {
		old := l.state.Load()
		if old&locked == 0 && (old&starving == 0 || woken) {
			next := old | locked | sleepers
			if hungry {
				next &^= starving
			}
			if l.state.CompareAndSwap(old, next) {
				return
			}
			continue
		}
		if woken && !hungry && time.Since(since) > starveAfter {
			hungry = true
		}
		next := old | sleepers
		if hungry {
			next |= starving
		}
		if !l.state.CompareAndSwap(old, next) {
			continue
		}
		if since.IsZero() {
			since = time.Now()
		}
		<-l.wake
		woken = true
	}
}

// Unlock releases the lock and, if someone may be asleep, wakes one.
func (l *parkingLock) Unlock() {
	if l.state.CompareAndSwap(locked, unlocked) {
		return
	}
	if l.state.Load()&locked == 0 { // only the holder changes locked: this reading is sure
		panic("workqueue: unlock of an unlocked queue lock")
	}
	old := l.state.And(^(locked | sleepers)) // starving stays: only a woken sleeper may take it
	if old&sleepers == 0 {
		return
	}
	select {
	case l.wake <- struct{}{}:
	default: // a token is there already; its sleeper will wake the next
	}
}
