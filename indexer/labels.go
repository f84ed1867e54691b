package indexer

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// This file is the one home of what LabelIndex means: an object with the
// labels ls is filed under LabelIndexValue(k, v) for every label k=v of ls,
// and under nothing else. labelValues is the one walk of an object's labels
// that says so, and every path that needs an object's label values takes
// them from it:
//
//   - LabelIndexFunc, the definition as an ordinary index function;
//   - plan.put (filing.go), for an object written while the index is in use;
//   - Indexer.UseLabelIndex, for every stored object when the index comes
//     into use;
//   - Snapshot's scans (snapshot.go), which answer LabelIndex reads of a
//     version taken before the index was in use.
//
// hasLabelValue and labelsFiledAs are its inverse: whether labels make one
// given value, or exactly a given set, answered without building a value.
// Unfiling needs neither: a key leaves the values its entry remembers
// (state.go). On the selector's side, package lister turns a selector's
// equality requirements into values with LabelIndexValue.

// LabelIndexValue is the LabelIndex value for the label key=value. Label keys
// and values cannot contain "=", so the value names one label unambiguously
// for any object the API server accepted.
func LabelIndexValue(key, value string) string {
	return key + "=" + value
}

// LabelIndexFunc is the definition of LabelIndex: one LabelIndexValue per
// label, sorted.
func LabelIndexFunc(obj runtime.Object) ([]string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	return labelValues(m.GetLabels()), nil
}

// objectLabelValues is labelValues for a stored object, which has metadata:
// it passed the built-in indexes when it was stored.
func objectLabelValues(obj runtime.Object) []string {
	m, _ := meta.Accessor(obj)
	return labelValues(m.GetLabels())
}

// objectLabels returns a stored object's labels.
func objectLabels(obj runtime.Object) map[string]string {
	m, _ := meta.Accessor(obj)
	return m.GetLabels()
}

// labelValues returns the values LabelIndex files an object with labels ls
// under, sorted and without duplicates (nil for no labels). Two labels make
// the same value only if a key holds "=", which the API server refuses, but
// the Indexer files any object and must not count such a value twice.
//
// The values are cut from one string: an object's values then take two
// allocations whatever its number of labels, and checking an update's labels
// against them (labelsFiledAs) reads one run of memory instead of a string
// per label scattered over the heap.
func labelValues(ls map[string]string) []string {
	if len(ls) == 0 {
		return nil
	}
	size := 0
	for k, v := range ls {
		size += len(k) + 1 + len(v)
	}
	var b strings.Builder
	b.Grow(size)
	var endsBuf [16]int
	ends := endsBuf[:0] // where each value ends in b
	for k, v := range ls {
		b.WriteString(k)
		b.WriteByte('=') // as LabelIndexValue does
		b.WriteString(v)
		ends = append(ends, b.Len())
	}
	all := b.String()
	out := make([]string, len(ends))
	start := 0
	for i, end := range ends {
		out[i], start = all[start:end], end
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// hasLabelValue reports whether labelValues(ls) holds value, without building
// any value: it splits value at each "=" in turn (one, for any label the API
// server accepts) and looks the two halves up in ls.
func hasLabelValue(ls map[string]string, value string) bool {
	for i := range len(value) {
		if value[i] != '=' {
			continue
		}
		if v, ok := ls[value[:i]]; ok && v == value[i+1:] {
			return true
		}
	}
	return false
}

// labelsFiledAs reports whether labelValues(ls) equals filed (values that
// labelValues returned), in a few map lookups and no allocation: what an
// update whose labels did not change, nearly every update, costs.
//
// Each value of filed names a label of ls (hasLabelValue), and two different
// values name two different labels; so if filed has as many values as ls
// has labels, every label of ls is named, and the two sets are equal.
func labelsFiledAs(ls map[string]string, filed []string) bool {
	if len(filed) != len(ls) {
		return false
	}
	for _, v := range filed {
		if !hasLabelValue(ls, v) {
			return false
		}
	}
	return true
}
