//go:build unix

package processor

import (
	"syscall"
	"time"
)

// processCPUTime returns the CPU time (user + system) the test process has
// used. Benchmarks report it per operation because on a shared machine wall
// time mostly measures the other tenants.
func processCPUTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
