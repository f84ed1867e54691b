package fakeapi

import (
	"sort"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// event is one write as the history remembers it. Both objects are the
// stored, immutable copies: they are shared with readers and never mutated.
type event struct {
	rv  uint64
	typ watch.EventType // Added, Modified or Deleted
	res *resourceInfo
	key string
	// obj is the state after the write. For a delete it is the last state
	// stamped with the deletion's resourceVersion, as etcd reports it.
	obj runtime.Object
	// prev is the state before the write; nil for an add. Watches with
	// selectors need it to notice an object leaving their view.
	prev runtime.Object
}

// eventLog is the bounded history of writes, oldest first, like etcd's
// revision history. Everything at or below compacted is forgotten: a watch or
// exact list that needs it gets 410 Expired.
//
// Not safe for concurrent use; the store's owner serialises access.
type eventLog struct {
	// buf[head:] are the live events. Dropping from the front only moves
	// head; the array is compacted when half of it is dead, so append stays
	// O(1) amortised even with a full window.
	buf  []event
	head int
	// window is how many events are kept; older ones are compacted away
	// automatically as new ones arrive. Zero keeps everything.
	window int
	// compacted is the highest resourceVersion whose event was dropped (or
	// the RV of an explicit Compact). Readers need every event after their
	// RV, so they can start from any rv >= compacted.
	compacted uint64
}

// live returns the retained events, oldest first. The slice is only valid
// until the next append or compaction.
func (l *eventLog) live() []event { return l.buf[l.head:] }

// append records ev (whose rv must exceed every earlier one) and drops the
// oldest events beyond the window.
func (l *eventLog) append(ev event) {
	l.buf = append(l.buf, ev)
	if over := len(l.buf) - l.head - l.window; l.window > 0 && over > 0 {
		l.dropOldest(over)
	}
}

// dropOldest forgets the n oldest events.
func (l *eventLog) dropOldest(n int) {
	l.compacted = l.buf[l.head+n-1].rv
	// Zero the dropped slots so the objects they hold can be collected.
	clear(l.buf[l.head : l.head+n])
	l.head += n
	if l.head > len(l.buf)/2 {
		kept := copy(l.buf, l.buf[l.head:])
		clear(l.buf[kept:])
		l.buf = l.buf[:kept]
		l.head = 0
	}
}

// compact forgets every event up to and including rv.
func (l *eventLog) compact(rv uint64) {
	if n := l.indexAfter(rv); n > 0 {
		l.dropOldest(n)
	}
	if rv > l.compacted {
		l.compacted = rv
	}
}

// available reports whether every event after rv is still in the log.
func (l *eventLog) available(rv uint64) bool { return rv >= l.compacted }

// indexAfter returns the position in live() of the first event with an RV
// above rv.
func (l *eventLog) indexAfter(rv uint64) int {
	live := l.live()
	return sort.Search(len(live), func(i int) bool { return live[i].rv > rv })
}
