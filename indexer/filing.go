package indexer

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
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
//
// Every index compares where the object goes with where old says it was
// filed (entry), never with what old's object says now.
func (p *plan) put(s *state, key string, old *entry, obj runtime.Object) (entry, error) {
	p.reset()
	cur, err := meta.Accessor(obj)
	if err != nil {
		// Both built-in indexes need metadata; report it as the first one.
		return entry{}, &IndexFuncError{Index: NamespaceIndex, Key: key, Err: err}
	}
	p.rv = cur.GetResourceVersion()
	e := entry{obj: obj, namespace: cur.GetNamespace()}
	// Most updates file the object where it was: e then keeps the old
	// entry's filed slice (it is never modified, so sharing it is safe), and
	// only the first change pays for a copy.
	shared := old != nil && old.filed != nil
	if old != nil {
		e.filed = old.filed
	}
	for i, d := range s.defs.list {
		if d.kind == namespaceIndex {
			p.namespaceMove(i, old, e.namespace)
			continue
		}
		was := old.filedAt(i)
		var vals []string
		switch d.kind {
		case labelIndex:
			if !s.labels {
				continue
			}
			ls := cur.GetLabels()
			if labelsFiledAs(ls, was) {
				continue // the common case: the labels did not change
			}
			vals = labelValues(ls)
		default:
			if vals, err = callIndexFunc(d, key, obj); err != nil {
				return entry{}, err
			}
			if slices.Equal(was, vals) {
				continue // the common case: the update did not touch the indexed field
			}
		}
		switch {
		case e.filed == nil:
			e.filed = make([][]string, len(s.defs.list)-1)
		case shared:
			e.filed, shared = slices.Clone(e.filed), false
		}
		e.filed[i-1] = vals
		p.record(i, minus(was, vals), minus(vals, was))
	}
	if !shared && e.filed != nil {
		e.filed = pack(e.filed)
	}
	return e, nil
}

// pack copies the values of every index in filed into one backing array,
// so that the next update of the key reads its old values from two adjacent
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

// remove plans taking a key, which holds old, out of every index of s:
// out of the values old says it was filed under.
func (p *plan) remove(s *state, old *entry) {
	p.reset()
	for i, d := range s.defs.list {
		if d.kind == namespaceIndex {
			p.record(i, p.namespaceWas(old.namespace), nil)
			continue
		}
		p.record(i, old.filedAt(i), nil)
	}
}

// namespaceMove plans NamespaceIndex for a write of an object in namespace
// now over old (nil for a new key). Comparing two strings is all an update
// usually costs.
func (p *plan) namespaceMove(i int, old *entry, now string) {
	switch {
	case old == nil:
		p.record(i, nil, p.namespaceNow(now))
	case old.namespace != now:
		p.record(i, p.namespaceWas(old.namespace), p.namespaceNow(now))
	}
}

func (p *plan) namespaceWas(ns string) []string {
	p.nsWas[0] = ns
	return p.nsWas[:]
}

func (p *plan) namespaceNow(ns string) []string {
	p.nsNow[0] = ns
	return p.nsNow[:]
}

// minus returns the values of a that are not in b: a itself when b is
// empty (a new key, a delete), which the caller must then not modify.
func minus(a, b []string) []string {
	const short = 16 // below this, scanning b beats building a set of it
	if len(b) == 0 {
		return a
	}
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
