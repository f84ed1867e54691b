package informer

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/seed31a95821/informer/indexer"
)

// Scope says which part of a resource one informer of a factory watches,
// and how it caches it: what controller-runtime's cache.Options calls
// ByObject and DefaultNamespaces, given where the informer is asked for
// (ForScope) instead of in a map keyed by type, so that the compiler checks
// the type. A zero field means the factory's own setting, so Scope{} is
// the scope For uses. The zero value is ready to use.
//
// The scope names the informer: two different scopes of one type in one
// factory are two informers, each with its own watches and cache, listed
// apart by WaitForCacheSync and removed apart by Remove (ScopedInformer.Name
// says under which name). The same scope asked for twice is one informer.
type Scope struct {
	// Namespaces are the namespaces to watch, with one watch each, and one
	// cache each behind one merged lister: the set-up of an operator told
	// WATCH_NAMESPACE=a,b, whose account may not watch every namespace.
	// Repeats count once. A single "" means every namespace, with one
	// watch. Nil or empty means FactoryOptions.Namespace. A cluster-scoped
	// resource ignores them (one watch, everything), so one Scope can serve
	// every type an operator watches. A name that is not a namespace name
	// (a DNS label), or "" among others, is refused with ErrInvalidScope.
	Namespaces []string
	// LabelSelector and FieldSelector are sent to the server with every
	// list and watch, as FactoryOptions' are; the cache holds only what
	// they select. "" means the factory's selector. A selector that does
	// not parse is refused with ErrInvalidScope.
	LabelSelector string
	FieldSelector string
	// Transform and Indexers replace FactoryOptions.Informer's for this
	// informer; a nil Transform.Func or nil Indexers mean the factory's. They are set when the informer is
	// made: a later ForScope with the same namespaces and selectors gets
	// that informer whatever its Transform and Indexers say (AddIndexers
	// adds indexes to a running informer).
	Transform Transform
	Indexers  indexer.Indexers
}

// ForScope returns the factory's informer for objects of type T in scope,
// making it on first use: the way to watch pods in namespaces a and b,
// nodes everywhere and deployments by label from one factory, on one
// connection pool and one rate limit. ForScope(f, Scope{}) is For(f), seen
// through a ScopedInformer. A scope that cannot be watched is refused with
// an error wrapping ErrInvalidScope; the rest of For's errors apply.
func ForScope[T runtime.Object](f *Factory, scope Scope) (*ScopedInformer[T], error) {
	r, err := resourceOf[T](f)
	if err != nil {
		return nil, err
	}
	return scopedFor[T](f, r, false, scope)
}

// selection is what of a resource a Scope selects, in a canonical form:
// two Scopes that select the same objects have equal selections, and so
// one informer. It is the part of the scope that names the informer.
type selection struct {
	// namespaces are sorted and distinct, and there is at least one:
	// [""] is every namespace, or a cluster-scoped resource.
	namespaces []string
	labels     string // canonical (labels.Selector.String) when it parses
	fields     string // canonical (fields.Selector.String) when it parses
}

// selectionOf resolves scope for resource r against the factory's own
// scope: zero fields take the factory's values, and the result is
// canonical. The factory's values are taken as they are (a selector that
// does not parse is the server's to refuse, as it was before scopes); the
// scope's own are checked here, where the caller can hear why.
func (f *Factory) selectionOf(r Resource, scope Scope) (selection, error) {
	sel := f.ownSelection(r)
	if len(scope.Namespaces) > 0 {
		ns, err := checkNamespaces(scope.Namespaces)
		if err != nil {
			return selection{}, err
		}
		sel.namespaces = ns
	}
	if r.ClusterScoped {
		sel.namespaces = []string{""}
	}
	var err error
	if scope.LabelSelector != "" {
		if sel.labels, err = canonicalLabels(scope.LabelSelector); err != nil {
			return selection{}, fmt.Errorf("%w: label selector %q: %w", ErrInvalidScope, scope.LabelSelector, err)
		}
	}
	if scope.FieldSelector != "" {
		if sel.fields, err = canonicalFields(scope.FieldSelector); err != nil {
			return selection{}, fmt.Errorf("%w: field selector %q: %w", ErrInvalidScope, scope.FieldSelector, err)
		}
	}
	return sel, nil
}

// ownSelection is the factory's own scope (FactoryOptions), for r.
func (f *Factory) ownSelection(r Resource) selection {
	ns := f.opts.Namespace
	if r.ClusterScoped {
		ns = ""
	}
	l, _ := canonicalLabels(f.opts.LabelSelector) // the server's to refuse (selectionOf)
	fs, _ := canonicalFields(f.opts.FieldSelector)
	return selection{namespaces: []string{ns}, labels: l, fields: fs}
}

// checkNamespaces returns namespaces sorted and without repeats, or an
// error wrapping ErrInvalidScope for a name that cannot be a namespace.
func checkNamespaces(namespaces []string) ([]string, error) {
	out := slices.Compact(slices.Sorted(slices.Values(namespaces)))
	if len(out) == 1 && out[0] == "" {
		return out, nil // every namespace
	}
	for _, ns := range out {
		if ns == "" {
			return nil, fmt.Errorf(`%w: "" (every namespace) among other namespaces %q`, ErrInvalidScope, namespaces)
		}
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return nil, fmt.Errorf("%w: namespace %q: %s", ErrInvalidScope, ns, strings.Join(errs, ", "))
		}
	}
	return out, nil
}

// canonicalLabels and canonicalFields write a selector in the one form its
// parser prints, so that "b=2,a=1" and "a=1,b=2" name one informer. A
// selector that does not parse is returned as it is, with the parser's
// error.
func canonicalLabels(s string) (string, error) {
	sel, err := labels.Parse(s)
	if err != nil {
		return s, err
	}
	return sel.String(), nil
}

func canonicalFields(s string) (string, error) {
	sel, err := fields.ParseSelector(s)
	if err != nil {
		return s, err
	}
	return sel.String(), nil
}

// equal reports whether s and o select the same objects.
func (s selection) equal(o selection) bool {
	return slices.Equal(s.namespaces, o.namespaces) && s.labels == o.labels && s.fields == o.fields
}

// suffix is how the selection shows in an informer's name:
// "{namespaces=a,b; labels=app=web}", "*" for every namespace, nothing
// about namespaces for a cluster-scoped resource.
func (s selection) suffix(clusterScoped bool) string {
	var parts []string
	if !clusterScoped {
		ns := strings.Join(s.namespaces, ",")
		if ns == "" {
			ns = "*"
		}
		parts = append(parts, "namespaces="+ns)
	}
	if s.labels != "" {
		parts = append(parts, "labels="+s.labels)
	}
	if s.fields != "" {
		parts = append(parts, "fields="+s.fields)
	}
	return "{" + strings.Join(parts, "; ") + "}"
}

// scopedKey names the informer of r in sel: the plain name For gives it
// ("pods") when sel is the factory's own scope, and that name with the
// selection after it otherwise ("pods{namespaces=a,b}"), so that each
// scope of a type has a name of its own.
func (f *Factory) scopedKey(r Resource, metadataOnly bool, sel selection) string {
	key := informerKey(r, metadataOnly)
	if sel.equal(f.ownSelection(r)) {
		return key
	}
	return key + sel.suffix(r.ClusterScoped)
}

// wireScope is the part of a selection one watch asks the server for.
type wireScope struct {
	namespace     string
	labelSelector string
	fieldSelector string
}

// in returns the part of s that the watch of namespace ns asks for.
func (s selection) in(ns string) wireScope {
	return wireScope{namespace: ns, labelSelector: s.labels, fieldSelector: s.fields}
}
