package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// The demo prints "churn N writes/s": a second of ticks must make N
// writes, for rates that are not multiples of the tick rate too.
func TestChurnMakesTheWritesPerSecondItReports(t *testing.T) {
	for _, perSecond := range []int{1, 50, 150, 300, 1234} {
		t.Run(fmt.Sprint(perSecond), func(t *testing.T) {
			c := newChurn(nil, nil, perSecond, 1)
			writes := 0
			for n := range 100 * 3 { // three seconds of 10ms ticks
				w := c.writesAtTick(n)
				require.LessOrEqual(t, w, perSecond/100+1, "tick %d: writes spread evenly", n)
				writes += w
				if n%100 == 99 {
					require.Equal(t, perSecond*(n+1)/100, writes, "after tick %d", n)
				}
			}
		})
	}
}
