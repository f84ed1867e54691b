package workqueue

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// check verifies what the queue's fields must agree on, which no single
// method can see broken: every item in the table is found from its own
// hash (an entry written as neither dirty nor busy, without remove, would
// end a probe early and lose the items after it); the counts match the
// table; the ready levels are sorted, one per priority; and every item waiting
// to be handed out has an entry in ready at its priority.
func (q *Queue[T]) check() error {
	q.lock()
	defer q.unlock()
	live, busy, ready := 0, 0, 0
	for k := range q.items.slots {
		s := &q.items.slots[k]
		if !s.used() {
			continue
		}
		live++
		if i, ok := q.items.find(s.item, uint64(s.hash)); !ok || i != k {
			return fmt.Errorf("item %v in slot %d is not found from its hash", s.item, k)
		}
		if s.busy {
			busy++
		} else if s.dirty {
			ready++
			if !q.queuedAt(s.item, s.priority, uint32(s.stamp)) {
				return fmt.Errorf("ready item %v has no live entry at priority %d", s.item, s.priority)
			}
		}
	}
	if live != q.items.live || busy != q.nbusy || ready != q.nready {
		return fmt.Errorf("counted live %d busy %d ready %d; the queue says %d %d %d",
			live, busy, ready, q.items.live, q.nbusy, q.nready)
	}
	entries := 0
	for k, l := range q.ready.byPriority {
		if k > 0 && q.ready.byPriority[k-1].priority <= l.priority {
			return fmt.Errorf("levels out of order at %d", k)
		}
		entries += l.items.n
	}
	if entries != q.nready+q.stale {
		return fmt.Errorf("%d entries in ready; nready %d + stale %d", entries, q.nready, q.stale)
	}
	return nil
}

// queuedAt reports whether ready holds an entry of item at priority p with
// ticket t.
func (q *Queue[T]) queuedAt(item T, p Priority, t uint32) bool {
	for _, l := range q.ready.byPriority {
		if l.priority != p {
			continue
		}
		for i := range l.items.n {
			if r := l.items.buf[(l.items.head+i)&(len(l.items.buf)-1)]; r.item == item && r.ticket == t {
				return true
			}
		}
	}
	return false
}

// TestQueueInvariants makes random Adds at random priorities, Gets, Dones
// and immediate AddAfters from one goroutine, checks the queue after every
// one, and checks each Get against a model: the item handed out must be
// waiting, not in hand, of the highest priority waiting, and, of those, the
// first in line. An item's place in line is where it was last queued: its
// first add, the Done after an add while in hand, or a raise.
func TestQueueInvariants(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	type state struct {
		dirty, busy bool
		priority    Priority
		since       int // when it was last queued: its place in line
	}
	model := map[int]*state{}
	add := func(step, item int, p Priority) {
		s := model[item]
		if s == nil {
			s = &state{}
			model[item] = s
		}
		switch {
		case !s.dirty:
			s.dirty, s.priority = true, p
			if !s.busy {
				s.since = step
			}
		case p > s.priority:
			s.priority = p
			if !s.busy {
				s.since = step
			}
		}
	}
	var q Queue[int]
	priorities := []Priority{PriorityLow, PriorityNormal, 7, 40}
	for step := range 20_000 {
		item := r.IntN(16)
		switch op := r.IntN(10); {
		case op < 4:
			p := priorities[r.IntN(len(priorities))]
			if r.IntN(5) == 0 {
				p = Priority(r.IntN(1000)) // a priority used once: its level must go
			}
			q.AddWithPriority(item, p)
			add(step, item, p)
		case op < 5:
			q.AddAfter(item, 0)
			add(step, item, PriorityNormal)
		case op < 8:
			if q.Len() == 0 {
				continue
			}
			got, _ := q.Get()
			s := model[got]
			if s == nil || !s.dirty || s.busy {
				t.Fatalf("step %d: got %d, which is not waiting (%+v)", step, got, s)
			}
			for other, o := range model {
				if !o.dirty || o.busy {
					continue
				}
				if o.priority > s.priority || o.priority == s.priority && o.since < s.since {
					t.Fatalf("step %d: got %d (priority %d, queued at %d) while %d waits ahead (priority %d, queued at %d)",
						step, got, s.priority, s.since, other, o.priority, o.since)
				}
			}
			s.dirty, s.busy = false, true
		default:
			q.Done(item)
			if s := model[item]; s != nil && s.busy {
				s.busy = false
				if s.dirty {
					s.since = step
				} else {
					delete(model, item)
				}
			}
		}
		if err := q.check(); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		// Thousands of priorities are used once over the run; the queue
		// must drop their levels, keeping no more than 16 items could
		// have waiting at once, with the four common ones.
		if n := len(q.ready.byPriority); n > 16+len(priorities) {
			t.Fatalf("step %d: %d levels kept", step, n)
		}
	}
}

// TestStaleEntriesDroppedWhenNothingWaits raises items through several
// priorities, leaving an entry behind at each, then takes every item: once
// nothing waits, the entries left behind must be gone, not kept (with their
// levels) until Get happens to reach them.
func TestStaleEntriesDroppedWhenNothingWaits(t *testing.T) {
	var q Queue[string]
	for _, item := range []string{"a", "b", "c"} {
		for _, p := range []Priority{PriorityLow, PriorityNormal, 10, 20} {
			q.AddWithPriority(item, p)
		}
	}
	require.Equal(t, 9, q.stale, "three raises of each of three items")
	for range 3 {
		q.Get()
	}
	require.Zero(t, q.stale)
	for _, l := range q.ready.byPriority {
		require.Zero(t, l.items.n, "level %d keeps entries", l.priority)
	}
	require.NoError(t, q.check())
}
