package lister

import (
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer/indexer"
	"github.com/seed31a95821/informer/internal/objkey"
)

// Options configures a Lister. The zero value is ready to use.
type Options struct {
	// Resource names what is listed (for example {Resource: "pods"}) in the
	// NotFound errors Get returns, so that they read like the API server's.
	Resource schema.GroupResource
	// CopyOnRead makes every returned object a deep copy, which the caller
	// may modify. It costs one DeepCopyObject per object returned; without
	// it, returned objects are the cache's own and MUST NOT be modified.
	CopyOnRead bool
}

// Lister is a typed, read-only view of an Indexer whose objects are all of
// type T (for example *corev1.Pod), stored under "namespace/name" keys (or
// "name" for cluster-scoped objects).
//
// A Lister is safe for concurrent use and holds no state of its own: every
// call reads one consistent snapshot of the Indexer, so the objects of one
// List are all from the same moment. (A Lister over one cache per namespace,
// NewByNamespace, reads one snapshot per namespace.)
//
// UNLESS Options.CopyOnRead IS SET, RETURNED OBJECTS ARE SHARED WITH THE
// CACHE AND EVERY OTHER READER: NEVER MODIFY THEM. Call DeepCopy first.
type Lister[T runtime.Object] struct {
	idx *indexer.Indexer
	// byNamespace, set by NewByNamespace instead of idx, holds one cache
	// per namespace (namespaces.go).
	byNamespace map[string]*indexer.Indexer
	opts        Options
}

// New returns a Lister of T over idx.
func New[T runtime.Object](idx *indexer.Indexer, opts Options) *Lister[T] {
	return &Lister[T]{idx: idx, opts: opts}
}

// Get returns the object called name in namespace ("" for a cluster-scoped
// object). If there is none it returns a NotFound error (apierrors.IsNotFound)
// naming Options.Resource; if the stored object is not a T, a *TypeError.
func (l *Lister[T]) Get(namespace, name string) (T, error) {
	var zero T
	if l.byNamespace != nil {
		return l.getByNamespace(namespace, name)
	}
	if l.idx == nil {
		return zero, ErrNoIndexer
	}
	return l.getIn(l.idx, namespace, name)
}

// getIn answers Get from idx.
func (l *Lister[T]) getIn(idx *indexer.Indexer, namespace, name string) (T, error) {
	key := objkey.Join(namespace, name)
	obj, ok := idx.Get(key)
	if !ok {
		var zero T
		return zero, apierrors.NewNotFound(l.opts.Resource, name)
	}
	return l.typed(key, obj)
}

// List returns the objects of every namespace whose labels match selector
// (nil or labels.Everything() for all), in no particular order. An
// equality-based selector is answered from the label index; see the package
// documentation.
func (l *Lister[T]) List(selector labels.Selector) ([]T, error) {
	return l.list("", selector)
}

// Namespace returns the view of one namespace. Namespace("") is the view of
// every namespace (List) and of cluster-scoped objects (Get).
func (l *Lister[T]) Namespace(namespace string) NamespaceLister[T] {
	return NamespaceLister[T]{l: l, namespace: namespace}
}

// NamespaceLister is a Lister restricted to one namespace, as in
// Namespace("shop").Get("web-1"). It is a small value, safe for concurrent
// use; make as many as you like.
type NamespaceLister[T runtime.Object] struct {
	l         *Lister[T]
	namespace string
}

// Get returns the object called name in the namespace; see Lister.Get.
func (n NamespaceLister[T]) Get(name string) (T, error) {
	return n.l.Get(n.namespace, name)
}

// List returns the namespace's objects whose labels match selector; see
// Lister.List. It reads the namespace index, or a label index bucket when the
// selector names a smaller one.
func (n NamespaceLister[T]) List(selector labels.Selector) ([]T, error) {
	return n.l.list(n.namespace, selector)
}

// list answers List for namespace ("" for all).
func (l *Lister[T]) list(namespace string, selector labels.Selector) ([]T, error) {
	if l.byNamespace != nil {
		return l.listByNamespace(namespace, selector)
	}
	if l.idx == nil {
		return nil, ErrNoIndexer
	}
	return l.listIn(l.idx, namespace, selector)
}

// listIn answers List for namespace ("" for all) from one snapshot of idx.
func (l *Lister[T]) listIn(idx *indexer.Indexer, namespace string, selector labels.Selector) ([]T, error) {
	if selector == nil {
		selector = labels.Everything()
	}
	if labels.MatchesNothing(selector) {
		return []T{}, nil
	}
	labelValues := equalityValues(selector)
	if len(labelValues) > 0 {
		// The indexer maintains its label index only once someone needs it;
		// the first such List pays for building it, then reads it like every
		// List after it.
		_ = idx.UseLabelIndex() // fails only for an unusable, empty indexer
	}
	// A view for the length of the query, not a frozen one: Freeze would
	// freeze the cache's current version, and every write after it would
	// copy what it changes (see indexer.Indexer.Read).
	var out []T
	var err error
	idx.Read(func(snap indexer.Snapshot) { out, err = l.query(snap, namespace, selector, labelValues) })
	return out, err
}

// query answers list from snap.
func (l *Lister[T]) query(snap indexer.Snapshot, namespace string, selector labels.Selector, labelValues []string) ([]T, error) {
	q, err := planQuery(snap, namespace, selector, labelValues)
	if err != nil {
		return nil, err
	}
	objects, err := q.candidates(snap)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, q.capacity())
	for key, obj := range objects {
		keep, err := q.matches(obj)
		if err != nil {
			return nil, fmt.Errorf("lister: %q: %w", key, err)
		}
		if !keep {
			continue
		}
		t, err := l.typed(key, obj)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// typed converts a stored object to T, copying it if asked to.
func (l *Lister[T]) typed(key string, obj runtime.Object) (T, error) {
	t, ok := obj.(T)
	if ok && l.opts.CopyOnRead {
		t, ok = obj.DeepCopyObject().(T)
	}
	if !ok {
		var zero T
		return zero, &TypeError{Key: key, Want: reflect.TypeFor[T]().String(), Got: fmt.Sprintf("%T", obj)}
	}
	return t, nil
}

// objectMeta reads the metadata a query filters on.
func objectMeta(obj runtime.Object) (namespace string, ls labels.Set, err error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", nil, err
	}
	return m.GetNamespace(), m.GetLabels(), nil
}

// ByIndex returns the objects filed under value in the named index (one of
// Options.Indexers, or added by AddIndexers), typed, in no particular order:
// the query client-go's indexer answers with []interface{}. An unknown index
// is an error from the indexer.
func (l *Lister[T]) ByIndex(indexName, value string) ([]T, error) {
	if l.byNamespace != nil {
		return l.byIndexByNamespace(indexName, value)
	}
	if l.idx == nil {
		return nil, ErrNoIndexer
	}
	return l.byIndexIn(l.idx, indexName, value)
}

// byIndexIn answers ByIndex from idx.
func (l *Lister[T]) byIndexIn(idx *indexer.Indexer, indexName, value string) ([]T, error) {
	objs, err := idx.ByIndex(indexName, value)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(objs))
	for _, obj := range objs {
		t, err := l.typed("", obj)
		if err != nil { // name the object only when it is the wrong type
			_, err = l.typed(typeErrorKey(obj), obj)
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// typeErrorKey names obj in a *TypeError: namespace/name, or name.
func typeErrorKey(obj runtime.Object) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Sprintf("%T", obj)
	}
	return objkey.Join(m.GetNamespace(), m.GetName())
}
