package lister

import (
	"iter"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/seed31a95821/informer/indexer"
)

// This file is the lister's query planner. A List names a namespace and a
// label selector; the answer is the objects that pass both. Scanning every
// object and testing it is always correct, and it is what client-go does for
// a selector: 100,000 label comparisons to find 100 pods.
//
// The indexer offers cheaper starting points. Each "key=value" requirement of
// the selector has a bucket in the label index holding exactly the objects
// with that label, and the namespace has a bucket in the namespace index. The
// answer lies inside every one of these buckets, so the planner reads only the
// smallest (sizes are known without touching objects) and tests its objects
// against the full namespace and selector. That test is what intersects the
// candidate sets: it costs a few map lookups per candidate, cheaper than
// probing the other buckets.

// query is a planned List: where candidates come from, and what each must
// pass.
type query struct {
	namespace string          // "" for every namespace
	selector  labels.Selector // never nil
	index     string          // "" to scan every object; else the bucket index/value
	value     string
	size      int  // how many candidates the source holds
	all       bool // every candidate is an answer: no need to read metadata
}

// equalityValues returns the LabelIndex values ("key=value") of the
// selector's equality requirements.
func equalityValues(selector labels.Selector) []string {
	reqs, selectable := selector.Requirements()
	if !selectable {
		return nil
	}
	var out []string
	for _, r := range reqs {
		if v, ok := equalityValue(r); ok {
			out = append(out, indexer.LabelIndexValue(r.Key(), v))
		}
	}
	return out
}

// planQuery picks the smallest candidate source in snap for namespace and
// selector, whose equality requirements are labelValues.
func planQuery(snap indexer.Snapshot, namespace string, selector labels.Selector, labelValues []string) (query, error) {
	q := query{namespace: namespace, selector: selector, size: snap.Len()}
	consider := func(index, value string) error {
		n, err := snap.IndexLen(index, value)
		if err != nil {
			return err
		}
		if q.index == "" || n < q.size {
			q.index, q.value, q.size = index, value, n
		}
		return nil
	}
	if namespace != "" {
		if err := consider(indexer.NamespaceIndex, namespace); err != nil {
			return q, err
		}
	}
	for _, v := range labelValues {
		if err := consider(indexer.LabelIndex, v); err != nil {
			return q, err
		}
	}
	// Listing a whole namespace from its bucket, or everything, needs no
	// test per object: the fast path of the most common List.
	q.all = selector.Empty() && (namespace == "" || q.index == indexer.NamespaceIndex)
	return q, nil
}

// equalityValue returns the one value a requirement demands, for "k=v",
// "k==v" and "k in (v)". Other operators (!=, notin, exists, ...) cannot be
// answered by one label bucket and only filter.
func equalityValue(r labels.Requirement) (string, bool) {
	switch r.Operator() {
	case selection.Equals, selection.DoubleEquals, selection.In:
		if vals := r.ValuesUnsorted(); len(vals) == 1 {
			return vals[0], true
		}
	}
	return "", false
}

// candidates iterates over the objects of the chosen source.
func (q query) candidates(snap indexer.Snapshot) (iter.Seq2[string, runtime.Object], error) {
	if q.index == "" {
		return snap.All(), nil
	}
	return snap.Indexed(q.index, q.value)
}

// capacity is how many results to make room for: every candidate when all
// pass, else only the bucket (a bound), and for a filtered full scan nothing
// in advance rather than a slot per stored object.
func (q query) capacity() int {
	if q.all || q.index != "" {
		return q.size
	}
	return 0
}

// matches tests one candidate against the namespace and the full selector.
func (q query) matches(obj runtime.Object) (bool, error) {
	if q.all {
		return true, nil
	}
	ns, ls, err := objectMeta(obj)
	if err != nil {
		return false, err
	}
	if q.namespace != "" && ns != q.namespace {
		return false, nil
	}
	return q.selector.Matches(ls), nil
}
