package integration

import (
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var (
	chaosSeed     = flag.Uint64("seed", 0, "TestChaos: run this one seed (0: run -seeds seeds)")
	chaosSeeds    = flag.Int("seeds", 200, "TestChaos: how many seeds to run (with -short: at most 30)")
	chaosSoak     = flag.Duration("soak", 0, "TestChaos: run seeds for this long instead of -seeds, and report how many ran")
	chaosParallel = flag.Int("chaos.parallel", 8, "TestChaos: seeds run at once")
)

// TestChaos is the model-based check of the whole pipeline. Each seed
// builds an informer (random encoding, WatchList or paged lists, atomic or
// per-key relists, few or many handlers) over a fakeapi server behind a TCP
// proxy, with handlers of every kind: fast, slow with a tiny backlog limit
// (so that it coalesces), panicking, keeping every update, added late,
// removed. It then runs 3 to 5 rounds: a fault from chaosFaults, writes
// that create, delete and move pods across the label selector, heal. Once
// the faults are healed and the system is quiet, every invariant must hold:
//
//   - the cache equals the server's objects in scope, at the server's
//     resourceVersions;
//   - each handler's view, rebuilt from what it was told, equals the server;
//   - no key's resourceVersion went backwards for any handler, an Update's
//     old object was what the handler was told last, and an Add or a Delete
//     always fit what the handler held;
//   - every key that vanished was last told as a Delete;
//   - every registration synced; a removed one is told nothing more.
//
// A seed that fails reports its seed, the schedule, the server's writes, the
// frames it sent and every handler's notifications. The seeds of a run are
// consecutive from a random start (logged); -seed replays one, -seeds sets
// how many, -soak runs for a duration.
func TestChaos(t *testing.T) {
	seeds, base := *chaosSeeds, rand.Uint64()>>1
	if testing.Short() {
		seeds = min(seeds, 30)
	}
	if *chaosSeed != 0 {
		seeds, base = 1, *chaosSeed
	}
	var deadline time.Time
	if *chaosSoak > 0 {
		deadline = time.Now().Add(*chaosSoak)
	}
	t.Logf("seeds from %d (%d, soak %v, %d at once)", base, seeds, *chaosSoak, *chaosParallel)

	sum := &chaosSummary{faults: map[string]int{}}
	start := time.Now()
	var next atomic.Uint64
	var wg sync.WaitGroup
	for range max(1, *chaosParallel) {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if deadline.IsZero() && i >= uint64(seeds) || !deadline.IsZero() && time.Now().After(deadline) {
					return
				}
				seed := base + i
				t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
					var res chaosResult
					defer func() { // also after a require in the seed stopped it
						res.diverged = res.diverged || t.Failed()
						sum.add(res)
					}()
					res = runChaosSeed(t, seed)
				})
				if !deadline.IsZero() && sum.seedsRun()%100 == 0 {
					sum.progress(os.Stdout, time.Since(start))
				}
			}
		})
	}
	wg.Wait()
	t.Log(sum.String(time.Since(start)))
	if *chaosSoak > 0 {
		sum.progress(os.Stdout, time.Since(start))
	}
}

// chaosSummary adds up the seeds of a run.
type chaosSummary struct {
	mu        sync.Mutex // guards every field below
	seeds     int
	diverged  int
	faults    map[string]int
	completed int // seeds that reached their check (a setup failure does not)
}

func (s *chaosSummary) add(r chaosResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seeds++
	if r.faults != nil {
		s.completed++
	}
	if r.diverged {
		s.diverged++
	}
	for name, n := range r.faults {
		s.faults[name] += n
	}
}

func (s *chaosSummary) seedsRun() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seeds
}

// String is the table docs/reliability.md quotes.
func (s *chaosSummary) String(took time.Duration) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	var faults, unmet, handlers int
	for name, n := range s.faults {
		switch {
		case strings.Contains(name, "handler"):
			handlers += n
		case strings.HasSuffix(name, "(not met)"):
			unmet += n
		case name != "no fault":
			faults += n
		}
	}
	fmt.Fprintf(&b, "chaos: %d seeds in %v, %d faults injected and met (%d not met), %d handler events, divergences found: %d\n",
		s.seeds, took.Round(time.Second), faults, unmet, handlers, s.diverged)
	for _, name := range slices.Sorted(maps.Keys(s.faults)) {
		fmt.Fprintf(&b, "  %-40s %d\n", name, s.faults[name])
	}
	return b.String()
}

// progress prints the summary so far where a soak's log shows it.
func (s *chaosSummary) progress(w *os.File, took time.Duration) {
	fmt.Fprint(w, s.String(took))
}
