//go:build !unix

package processor

import "time"

// processCPUTime is not available here; benchmarks then omit the CPU metric.
func processCPUTime() (time.Duration, bool) { return 0, false }
