package indexer

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// This file decides where a write files a key. Planning is separate from
// applying (state.apply) for one reason: all-or-nothing. Every index function
// runs, and may fail, before the first byte of the state changes; once the
// plan exists, applying it cannot fail.

// move is how one key's place in one index changes with a write.
type move struct {
	index  int      // position in indexSet.list
	remove []string // values to take the key out of
	add    []string // values to file the key under
}

// plan collects the moves of one write. The Indexer keeps one and reuses it,
// so a write that changes no index allocates nothing here. Not safe for
// concurrent use: it belongs to whoever holds Indexer.writeMu.
type plan struct {
	moves []move
	rv    string // the resourceVersion of the object put, "" if none
	// nsWas and nsNow back the one-value slices namespaceMove records, so
	// that filing a key under its namespace allocates nothing. They are
	// read by state.apply before the next reset, never later.
	nsWas, nsNow [1]string
}

func (p *plan) reset() {
	clear(p.moves) // drop references to old value slices
	p.moves = p.moves[:0]
}

func (p *plan) record(index int, remove, add []string) {
	if len(remove) > 0 || len(add) > 0 {
		p.moves = append(p.moves, move{index: index, remove: remove, add: add})
	}
}

// put plans writing obj under key into s, replacing old (nil for a new key),
// and returns the entry to store. On error nothing has been planned that
// matters: the caller discards the plan.
func (p *plan) put(s *state, key string, old *entry, obj runtime.Object) (entry, error) {
	defs := s.defs
	p.reset()
	cur, err := meta.Accessor(obj)
	if err != nil {
		// Both built-in indexes need metadata; report it as the first one.
		return entry{}, &IndexFuncError{Index: NamespaceIndex, Key: key, Err: err}
	}
	p.rv = cur.GetResourceVersion()
	var prev metav1.Object
	if old != nil {
		// Stored objects always have metadata: they passed this check.
		prev, _ = meta.Accessor(old.obj)
	}
	e := entry{obj: obj}
	// Most updates leave every custom value as it was: e then keeps the old
	// entry's filed slice (it is never modified, so sharing it is safe), and
	// only the first change pays for a copy.
	shared := old != nil
	if shared {
		e.filed = old.filed
	} else if n := defs.customCount(); n > 0 {
		e.filed = make([][]string, n)
	}
	for i, d := range defs.list {
		switch d.kind {
		case namespaceIndex:
			p.namespaceMove(i, prev, cur)
		case labelIndex:
			if s.labels {
				p.labelMove(i, prev, cur)
			}
		default:
			vals, err := callIndexFunc(d, key, obj)
			if err != nil {
				return entry{}, err
			}
			c := i - builtinCount
			var was []string
			if old != nil {
				was = old.filed[c]
			}
			if slices.Equal(was, vals) {
				continue // the common case: the update did not touch the indexed field
			}
			if shared {
				e.filed, shared = slices.Clone(e.filed), false
			}
			e.filed[c] = vals
			p.record(i, minus(was, vals), minus(vals, was))
		}
	}
	if !shared && e.filed != nil {
		e.filed = pack(e.filed)
	}
	return e, nil
}

// pack copies the values of every custom index into one backing array, so
// that the next update of the key reads its old values from two adjacent
// allocations instead of one per index (fewer cache misses on the write
// path), and the garbage collector traces two objects instead of many.
func pack(filed [][]string) [][]string {
	total := 0
	for _, v := range filed {
		total += len(v)
	}
	vals := make([]string, 0, total)
	for c, v := range filed {
		start := len(vals)
		vals = append(vals, v...)
		filed[c] = vals[start:len(vals):len(vals)]
	}
	return filed
}

// remove plans taking a key, which holds old, out of every index of s.
func (p *plan) remove(s *state, old entry) {
	p.reset()
	prev, _ := meta.Accessor(old.obj)
	for i, d := range s.defs.list {
		switch d.kind {
		case namespaceIndex:
			p.namespaceMove(i, prev, nil)
		case labelIndex:
			if s.labels {
				p.labelMove(i, prev, nil)
			}
		default:
			p.record(i, old.filed[i-builtinCount], nil)
		}
	}
}

// namespaceMove plans NamespaceIndex for an object going from prev to cur
// (either may be nil). Comparing two strings is all an update usually costs.
func (p *plan) namespaceMove(i int, prev, cur metav1.Object) {
	switch {
	case prev == nil && cur == nil:
	case prev == nil:
		p.record(i, nil, p.namespaceNow(cur))
	case cur == nil:
		p.record(i, p.namespaceWas(prev), nil)
	case prev.GetNamespace() != cur.GetNamespace():
		p.record(i, p.namespaceWas(prev), p.namespaceNow(cur))
	}
}

func (p *plan) namespaceWas(o metav1.Object) []string {
	p.nsWas[0] = o.GetNamespace()
	return p.nsWas[:]
}

func (p *plan) namespaceNow(o metav1.Object) []string {
	p.nsNow[0] = o.GetNamespace()
	return p.nsNow[:]
}

// labelMove plans LabelIndex for an object going from prev to cur (either
// may be nil). Only labels that changed are touched, and unchanged labels
// cost one map lookup each, with no allocation.
func (p *plan) labelMove(i int, prev, cur metav1.Object) {
	var was, now map[string]string
	if prev != nil {
		was = prev.GetLabels()
	}
	if cur != nil {
		now = cur.GetLabels()
	}
	var remove, add []string
	for k, v := range was {
		if nv, ok := now[k]; !ok || nv != v {
			remove = append(remove, LabelIndexValue(k, v))
		}
	}
	// With nothing removed and as many labels as before, now equals was.
	if len(remove) > 0 || len(now) != len(was) {
		for k, v := range now {
			if ov, ok := was[k]; !ok || ov != v {
				add = append(add, LabelIndexValue(k, v))
			}
		}
	}
	p.record(i, remove, add)
}

// minus returns the values of a that are not in b.
func minus(a, b []string) []string {
	const short = 16 // below this, scanning b beats building a set of it
	var out []string
	if len(b) <= short {
		for _, v := range a {
			if !slices.Contains(b, v) {
				out = append(out, v)
			}
		}
		return out
	}
	in := make(map[string]struct{}, len(b))
	for _, v := range b {
		in[v] = struct{}{}
	}
	for _, v := range a {
		if _, ok := in[v]; !ok {
			out = append(out, v)
		}
	}
	return out
}
