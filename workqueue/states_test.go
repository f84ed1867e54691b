package workqueue

import (
	"hash/maphash"
	"math/rand/v2"
	"testing"
)

// TestStatesModel inserts, changes and removes random items against a model
// map, and checks that the table finds exactly the items put in, with their
// entries, through its growth, removals that shift entries back (across the
// end of the table too) and its shrinking after a burst. It runs twice: with
// real hashes, and with hashes that eight items share each, so that long
// runs of colliding items form and removals have entries to shift.
func TestStatesModel(t *testing.T) {
	seed := maphash.MakeSeed()
	hashes := map[string]func(int) uint64{
		"maphash": func(item int) uint64 { return maphash.Comparable(seed, item) },
		"collide": func(item int) uint64 { return uint64(item/8) * 0x9e3779b97f4a7c15 },
	}
	for name, hash := range hashes {
		t.Run(name, func(t *testing.T) {
			rseed := rand.Uint64()
			t.Logf("seed %d", rseed)
			r := rand.New(rand.NewPCG(rseed, 0))
			var s states[int]
			model := map[int]Priority{}
			grown := 0
			for step := range 100_000 {
				// Fill towards 3000 items, then empty out, twice: the
				// table grows past shrinkAbove and shrinks back.
				fill := (step/25_000)%2 == 0
				item := r.IntN(4000)
				i, ok := s.find(item, hash(item))
				if _, want := model[item]; ok != want {
					t.Fatalf("step %d: find(%d) = %v, want %v", step, item, ok, want)
				}
				switch {
				case !ok && (fill || r.IntN(50) == 0):
					p := Priority(r.IntN(100))
					s.insert(i, item, hash(item), entry{dirty: true, priority: p})
					model[item] = p
				case ok && (!fill || r.IntN(4) == 0):
					s.remove(i)
					delete(model, item)
				case ok:
					p := Priority(r.IntN(100))
					s.at(i).priority = p
					model[item] = p
				}
				grown = max(grown, len(s.slots))
				if s.live != len(model) {
					t.Fatalf("step %d: %d live, want %d", step, s.live, len(model))
				}
				if step%500 == 0 {
					checkStates(t, step, &s, model, hash)
				}
			}
			if grown <= shrinkAbove || len(s.slots) >= grown {
				t.Errorf("the table grew to %d slots and ended with %d: growth or shrinking untested", grown, len(s.slots))
			}
		})
	}
}

func checkStates(t *testing.T, step int, s *states[int], model map[int]Priority, hash func(int) uint64) {
	t.Helper()
	for item, p := range model {
		i, ok := s.find(item, hash(item))
		if !ok || s.at(i).priority != p {
			t.Fatalf("step %d: item %d not found with priority %d", step, item, p)
		}
	}
	n := 0
	for item, e := range s.all() {
		if p, ok := model[item]; !ok || e.priority != p {
			t.Fatalf("step %d: all yields %d at %d, model has %d, %v", step, item, e.priority, p, ok)
		}
		n++
	}
	if n != len(model) {
		t.Fatalf("step %d: all yields %d items, want %d", step, n, len(model))
	}
}
