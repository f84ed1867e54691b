package lister

import (
	"maps"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer/indexer"
)

// A Lister over several caches, one per namespace: the view of an informer
// that watches a few namespaces with one watch each (a namespaced watch is
// all a service account limited to those namespaces may open), and so
// keeps one cache each.
//
// Reads of one namespace go to that namespace's cache alone, and cost what
// they cost on a Lister over one cache. Reads across namespaces (List,
// Namespace("").List, ByIndex) ask every cache in turn and join the
// answers: each namespace's objects are from one moment, but the moments
// of two namespaces may differ, as they would for two informers.

// NewByNamespace returns a Lister of T over caches, which maps each
// namespace to the cache that holds its objects and only those. A
// namespace that is not in caches holds nothing: Get answers NotFound and
// List an empty slice. Cluster-scoped objects have no namespace and no
// place here. The map is copied (without its nil caches); the caches are
// not.
func NewByNamespace[T runtime.Object](caches map[string]*indexer.Indexer, opts Options) *Lister[T] {
	byNamespace := make(map[string]*indexer.Indexer, len(caches))
	for ns, idx := range caches {
		if idx != nil {
			byNamespace[ns] = idx
		}
	}
	return &Lister[T]{byNamespace: byNamespace, opts: opts}
}

// getByNamespace answers Get from namespace's cache.
func (l *Lister[T]) getByNamespace(namespace, name string) (T, error) {
	idx := l.byNamespace[namespace]
	if idx == nil {
		var zero T
		return zero, apierrors.NewNotFound(l.opts.Resource, name)
	}
	return l.getIn(idx, namespace, name)
}

// listByNamespace answers List from namespace's cache, or, for "", from
// every cache.
func (l *Lister[T]) listByNamespace(namespace string, selector labels.Selector) ([]T, error) {
	if namespace != "" {
		idx := l.byNamespace[namespace]
		if idx == nil {
			return []T{}, nil
		}
		return l.listIn(idx, namespace, selector)
	}
	var out []T
	for _, ns := range l.namespaces() {
		part, err := l.listIn(l.byNamespace[ns], "", selector)
		if err != nil {
			return nil, err
		}
		out = append(out, part...)
	}
	if out == nil {
		out = []T{}
	}
	return out, nil
}

// byIndexByNamespace answers ByIndex from every cache. An index one of the
// caches lacks is an error, as it is for a single cache.
func (l *Lister[T]) byIndexByNamespace(indexName, value string) ([]T, error) {
	out := []T{}
	for _, ns := range l.namespaces() {
		part, err := l.byIndexIn(l.byNamespace[ns], indexName, value)
		if err != nil {
			return nil, err
		}
		out = append(out, part...)
	}
	return out, nil
}

// namespaces returns the namespaces with a cache, sorted, so that merged
// answers come in the same order of namespaces every time.
func (l *Lister[T]) namespaces() []string {
	return slices.Sorted(maps.Keys(l.byNamespace))
}
