package workqueue

import (
	"math/rand/v2"
	"testing"
)

// TestDelaysModel schedules and pops random items against a model map: the
// heap hands items out in due order, each item waits once with the earliest
// of its due times, and the index finds exactly the waiting items, through
// the table's growth, tombstones and its release when the heap empties.
func TestDelaysModel(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	var w delays[int]
	model := map[int]int64{} // item -> due
	last := int64(-1 << 62)  // the due time of the last pop
	for step := range 200_000 {
		if r.IntN(3) > 0 || len(model) == 0 {
			item, due := r.IntN(5000), last+1+r.Int64N(1000)
			w.schedule(item, due)
			if old, ok := model[item]; !ok || due < old {
				model[item] = due
			}
		} else {
			due := w.heap[0].due
			item := w.popMin()
			if model[item] != due {
				t.Fatalf("step %d: popped %d due %d, want due %d", step, item, due, model[item])
			}
			if due < last {
				t.Fatalf("step %d: popped due %d after %d", step, due, last)
			}
			last = due
			delete(model, item)
		}
		if w.len() != len(model) || w.index.live != len(model) {
			t.Fatalf("step %d: %d waiting, index %d, want %d", step, w.len(), w.index.live, len(model))
		}
		if step%1000 == 0 {
			for item, due := range model {
				if i, ok := w.index.find(w.heap, item); !ok || w.heap[i].due != due {
					t.Fatalf("step %d: item %d not found at its due time %d", step, item, due)
				}
			}
			if _, ok := w.index.find(w.heap, -1); ok {
				t.Fatalf("step %d: found an item never scheduled", step)
			}
		}
	}
}
