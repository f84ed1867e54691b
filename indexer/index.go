package indexer

import (
	"fmt"
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// IndexFunc computes the values an object is filed under in one index: a
// node name, an owner's UID, anything derived from the object. An object can
// be filed under several values, or none (an empty result). Duplicate values
// count once.
//
// The function must be deterministic and must not keep or modify the slice it
// returns: the Indexer remembers that slice as the object's filing, and uses it
// to take the object out again when it changes or is deleted (so removal never
// depends on calling the function on an old object). An error, or a panic,
// refuses the write that needed it; see IndexFuncError.
type IndexFunc func(obj runtime.Object) ([]string, error)

// Indexers names index functions. The names NamespaceIndex and LabelIndex are
// taken by the built-in indexes.
type Indexers map[string]IndexFunc

// The built-in indexes every Indexer has. They read only object metadata, so
// they are maintained by specialised code that compares an object's new
// metadata with where its old version was filed, without allocating;
// NamespaceIndexFunc and LabelIndexFunc are their definitions as ordinary
// index functions.
const (
	// NamespaceIndex files every object under its namespace ("" for
	// cluster-scoped objects). Listers answer Namespace(ns).List from it.
	NamespaceIndex = "namespace"
	// LabelIndex files every object under one value per label, built by
	// LabelIndexValue ("app=web"). Listers answer equality label selectors
	// from it instead of scanning every object. It is maintained from the
	// first time it is needed: see Indexer.UseLabelIndex.
	LabelIndex = "labels"
)

// NamespaceIndexFunc is the definition of NamespaceIndex.
func NamespaceIndexFunc(obj runtime.Object) ([]string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	return []string{m.GetNamespace()}, nil
}

// indexKind tells the built-in indexes, which get specialised code, from the
// caller's.
type indexKind uint8

const (
	customIndex indexKind = iota
	namespaceIndex
	labelIndex
)

type indexDef struct {
	name string
	kind indexKind
	fn   IndexFunc // a custom index's definition; nil for the built-ins, which filing.go files itself
}

// indexSet is the list of an Indexer's indexes. It is immutable: AddIndexers
// makes a new one, so a snapshot always pairs its indexes with the set that
// built them. Built-ins come first (NamespaceIndex at 0, LabelIndex at 1),
// then custom indexes sorted by name. Where an object was filed is kept in
// its entry: entry.namespace for NamespaceIndex, entry.filed[i-1] for the
// index at any other position i.
type indexSet struct {
	list   []indexDef
	byName map[string]int
}

func builtinIndexes() *indexSet {
	return &indexSet{
		list: []indexDef{
			{name: NamespaceIndex, kind: namespaceIndex},
			{name: LabelIndex, kind: labelIndex},
		},
		byName: map[string]int{NamespaceIndex: 0, LabelIndex: 1},
	}
}

// with returns a new set with the indexes of add appended, or an error (and
// no set) if a name is taken or a function is nil.
func (s *indexSet) with(add Indexers) (*indexSet, error) {
	names := make([]string, 0, len(add))
	for name, fn := range add {
		if _, taken := s.byName[name]; taken {
			return nil, fmt.Errorf("%w: %q", ErrIndexExists, name)
		}
		if fn == nil {
			return nil, fmt.Errorf("%w: %q", ErrNilIndexFunc, name)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	next := &indexSet{list: slices.Clone(s.list), byName: make(map[string]int, len(s.list)+len(names))}
	for name, i := range s.byName {
		next.byName[name] = i
	}
	for _, name := range names {
		next.byName[name] = len(next.list)
		next.list = append(next.list, indexDef{name: name, kind: customIndex, fn: add[name]})
	}
	return next, nil
}

// callIndexFunc runs a caller's index function, turning an error or a panic
// into an IndexFuncError, and returns its values without duplicates.
func callIndexFunc(d indexDef, key string, obj runtime.Object) (vals []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			vals, err = nil, &IndexFuncError{Index: d.name, Key: key, Err: fmt.Errorf("%w: %v", ErrIndexFuncPanicked, r)}
		}
	}()
	vals, err = d.fn(obj)
	if err != nil {
		return nil, &IndexFuncError{Index: d.name, Key: key, Err: err}
	}
	return distinct(vals), nil
}

// distinct returns vals without duplicates. It returns vals itself when a
// short slice has none, which is the usual case, and a sorted copy otherwise:
// the caller's slice is never modified.
func distinct(vals []string) []string {
	const short = 16 // below this a quadratic scan is cheaper than sorting a copy
	if len(vals) > short {
		out := slices.Clone(vals)
		slices.Sort(out)
		return slices.Compact(out)
	}
	for i := 1; i < len(vals); i++ {
		if slices.Contains(vals[:i], vals[i]) {
			out := slices.Clone(vals)
			slices.Sort(out)
			return slices.Compact(out)
		}
	}
	return vals
}
