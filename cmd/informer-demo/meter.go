package main

import (
	"sync/atomic"
	"time"
)

// meter measures one handler from the outside: how many calls it has
// finished and how long they took in total, so the demo can show the mean
// time per call. (The registration's own statistics keep the latest and the
// longest call, which say little about a handler whose calls vary.)
type meter struct {
	calls atomic.Int64
	total atomic.Int64 // nanoseconds spent in the handler's calls
}

// time runs f and counts it.
func (m *meter) time(f func()) {
	start := time.Now()
	f()
	m.total.Add(int64(time.Since(start)))
	m.calls.Add(1)
}

// mean is the average time per call so far, 0 before the first.
func (m *meter) mean() time.Duration {
	n := m.calls.Load()
	if n == 0 {
		return 0
	}
	return time.Duration(m.total.Load() / n)
}
