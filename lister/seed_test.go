package lister

import (
	"flag"
	"testing"
	"time"
)

var seedFlag = flag.Int64("seed", 0, "seed for the randomised tests (0: a new one each run); pass with -args -seed=N")

// testSeed returns the seed for a randomised test and logs it, with the
// command that replays it.
func testSeed(t *testing.T) int64 {
	t.Helper()
	seed := *seedFlag
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("seed=%d (replay: go test ./lister -run '^%s$' -args -seed=%d)", seed, t.Name(), seed)
	return seed
}
