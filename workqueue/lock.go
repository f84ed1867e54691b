// This file is a fast path: the queue's mutex. To go back to sync.Mutex,
// change the type of Queue.mu to sync.Mutex, delete parkingLock's set-up
// line in Queue.setUp, and delete this file and lock_test.go, its own
// tests; every other test passes either way. What it buys is measured by
// BenchmarkWorkqueue in bench/, with 8 and 64 workers.

package workqueue

import "sync/atomic"

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
// compare-and-swap to take it and one swap to release it.
//
// The protocol is the classic three-state one (Drepper, "Futexes Are
// Tricky"): state is 0 when the lock is free, 1 when it is held, 2 when it
// is held and someone may be asleep. A caller that must sleep first sets
// 2, so the holder knows to wake one sleeper when it unlocks; a woken
// sleeper sets 2 again as it takes the lock, because others may still be
// asleep. wake is the sleepers' bed: a channel of one token. An Unlock
// that finds the token already there leaves it: one sleeper will wake on
// it and set 2, and the next Unlock wakes the next. A token nobody was
// waiting for costs a later sleeper one extra look at state.
//
// It is not fair, and less fair than sync.Mutex: a caller that arrives
// while the lock is free takes it ahead of a woken sleeper, which then
// sleeps again at the back of the line. sync.Mutex puts such a sleeper at
// the front, and hands it the lock outright once it has waited over a
// millisecond; this lock has no such mode, so under contention that never
// lets up a caller's wait has no bound. Items still leave in priority and
// first-in, first-out order, whichever worker takes them; but the callers
// that take the lock seldom, the timer moving delayed items that fell due,
// Stats and ShutDownWithDrain, may wait longer than with sync.Mutex while
// workers contend without pause.
//
// wake is a channel, so a Queue first used inside a testing/synctest
// bubble belongs to that bubble: a contended Lock or an Unlock from outside
// it is a fatal error of the test binary.
//
// Its zero value is not ready: Queue.setUp makes wake. It must not be
// copied after first use.
type parkingLock struct {
	state atomic.Int32
	wake  chan struct{}
}

const (
	unlocked  int32 = 0
	locked    int32 = 1
	contended int32 = 2 // locked, and a caller may be asleep in wake
)

// setUp makes the lock ready; Queue.setUp calls it once.
func (l *parkingLock) setUp() { l.wake = make(chan struct{}, 1) }

// Lock takes the lock, sleeping until it is free.
func (l *parkingLock) Lock() {
	if l.state.CompareAndSwap(unlocked, locked) {
		return
	}
	for l.state.Swap(contended) != unlocked {
		<-l.wake
	}
}

// Unlock releases the lock and, if someone may be asleep, wakes one.
func (l *parkingLock) Unlock() {
	switch l.state.Swap(unlocked) {
	case locked:
		return
	case unlocked:
		panic("workqueue: unlock of an unlocked queue lock")
	}
	select {
	case l.wake <- struct{}{}:
	default: // a token is there already; its sleeper will wake the next
	}
}
