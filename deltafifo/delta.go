package deltafifo

import "k8s.io/apimachinery/pkg/runtime"

// DeltaType names the kind of change a Delta records.
type DeltaType string

// The kinds of change. Added, Updated and Deleted come from watch events;
// Replaced from a relist (Queue.Replace); Sync from a periodic resync
// (Queue.Resync), which re-delivers an object that did not change so that
// handlers get a chance to reconcile.
const (
	Added    DeltaType = "Added"
	Updated  DeltaType = "Updated"
	Deleted  DeltaType = "Deleted"
	Replaced DeltaType = "Replaced"
	Sync     DeltaType = "Sync"
)

// Delta is one change to one object: its kind, and the object's state after
// the change (for Deleted: its last state before it went away).
type Delta struct {
	Type DeltaType
	// Object is never nil. It is shared with the consumer's cache once
	// applied: treat it as read-only.
	Object runtime.Object
	// FinalStateUnknown is set only on a Deleted delta that the queue
	// inferred during Replace: the object was missing from a relist, so it
	// was deleted while nobody was watching. Such a delta is a tombstone:
	// Object is the last state the consumer knew, which may be stale.
	FinalStateUnknown bool
}

// Deltas is the ordered history of one key, oldest first. In an Item it is
// never empty.
type Deltas []Delta

// Oldest returns the first delta, or the zero Delta if d is empty.
func (d Deltas) Oldest() Delta {
	if len(d) == 0 {
		return Delta{}
	}
	return d[0]
}

// Newest returns the last delta, or the zero Delta if d is empty. Its
// Object is the state the key reaches once all of d is applied (or, if it
// is a Deleted, the key's last state before it went away).
func (d Deltas) Newest() Delta {
	if len(d) == 0 {
		return Delta{}
	}
	return d[len(d)-1]
}

// coalesce says what appending next to a history that ends in last does.
type coalesce uint8

const (
	appendNext  coalesce = iota // the history grows by one
	replaceLast                 // next takes last's place
	dropNext                    // last already says everything next says
)

// coalesceRule holds the queue's two collapsing rules. It is a pure function
// of the two neighbouring deltas, so the rules can be read (and tested) in
// one place:
//
//   - Two deletes in a row say the same thing: the object is gone. Keep the
//     one with more information. A real delete carries the object's true
//     final state; a tombstone carries a guess. So a real delete is kept
//     over a tombstone, and between two real deletes the older is kept;
//     between two tombstones the newer (as client-go does: it was inferred
//     later). The watch can repeat a delete after a relist, and a relist
//     can infer a delete the watch then reports; either way the consumer
//     must see one deletion, not two.
//
//   - Unless keepAllUpdates (Options.KeepAllUpdates) is set, a change of
//     state (Updated or Replaced) that follows another one (Updated,
//     Replaced or Sync) replaces it: update compaction. The consumer
//     skips a state it would have overwritten at once. Added and
//     Deleted are never merged away: they are an object's birth and death,
//     which handlers must see. What is lost is only an intermediate state,
//     and a Sync that the newer state makes moot.
func coalesceRule(last, next Delta, keepAllUpdates bool) coalesce {
	if last.Type == Deleted && next.Type == Deleted {
		if last.FinalStateUnknown {
			return replaceLast // anything beats an older guess
		}
		return dropNext // a real delete is never replaced
	}
	if !keepAllUpdates && isChange(next.Type) && (isChange(last.Type) || last.Type == Sync) {
		return replaceLast
	}
	return appendNext
}

// isChange reports whether t moves an existing object to a new state.
func isChange(t DeltaType) bool { return t == Updated || t == Replaced }

// appendDelta adds next to the history ds by coalesceRule, and reports
// whether next was absorbed (the history did not grow).
func appendDelta(ds Deltas, next Delta, keepAllUpdates bool) (Deltas, bool) {
	if len(ds) == 0 {
		return append(ds, next), false
	}
	switch coalesceRule(ds[len(ds)-1], next, keepAllUpdates) {
	case replaceLast:
		ds[len(ds)-1] = next
		return ds, true
	case dropNext:
		return ds, true
	default:
		return append(ds, next), false
	}
}
