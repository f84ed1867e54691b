package reflector

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/seed31a95821/informer/internal/objkey"
)

// The scope check: the one place that decides whether an object belongs to
// the part of the resource the reflector asked for.
//
// A ListerWatcher is scoped by whoever built it: a namespace, a label
// selector, a field selector, sent with every request. The server filters
// by them before it sends anything, so a conforming server never sends an
// object outside them. A server that does (a bug, a proxy that drops the
// query, a hostile server) must not get another namespace's objects, or
// ones the selectors exclude, into a cache whose readers, listers and
// handlers trust that it holds only what they asked for. So the reflector
// checks every object it is about to store, list items and watch events
// alike, and refuses one outside the scope: ErrOutOfScope, KindRefused,
// reported and counted, never stored and never told to a handler.
//
// The reflector learns the scope from the ListerWatcher's optional Scope
// method (capabilities.go); reflector/wire's ListerWatcher has it, and so
// does ListWatch. A ListerWatcher without it is not checked.
//
// What is checked: the namespace; the whole label selector; and the
// requirements of the field selector on metadata.name and
// metadata.namespace, the two fields every resource's server filters by.
// Requirements on any other field (a pod's spec.nodeName, say) are the
// server's alone: which fields a server can filter by differs by resource,
// and reading them would mean knowing every type's fields. A selector that
// does not parse is not checked either (the server refuses it, 400, before
// any object is sent).
//
// A DELETED event is checked like the rest. That loses nothing a conforming
// server sends: when an object leaves the selector, the server tells the
// watch with a DELETED event carrying the object's last state that matched.
//
// The check runs once per event, so it is built for that: the selectors are
// parsed once, in New, and checking an object costs a string compare, the
// label selector's map lookups and a compare per field rule, with no
// allocation unless the object is refused.

// scope is the part of the resource the reflector asked for. Its zero
// value admits everything. It is built by New and read-only afterwards, so
// it is safe for concurrent use.
type scope struct {
	namespace string          // "": every namespace
	labels    labels.Selector // nil: any labels
	fields    []fieldRule     // the field selector's rules on metadata.name and metadata.namespace
}

// fieldRule is one requirement of a field selector that the scope checks.
type fieldRule struct {
	namespace bool // on metadata.namespace; otherwise on metadata.name
	value     string
	equal     bool // "=" and "=="; false for "!="
}

// The fields every resource's server filters by.
const (
	fieldName      = "metadata.name"
	fieldNamespace = "metadata.namespace"
)

// scopeOf returns the scope lw says it asked for: none when it does not say.
func scopeOf(lw ListerWatcher) scope {
	s, ok := lw.(scoped)
	if !ok {
		return scope{}
	}
	return newScope(s.Scope())
}

// newScope parses a scope once, for every object it will check.
func newScope(namespace, labelSelector, fieldSelector string) scope {
	s := scope{namespace: namespace}
	if sel, err := labels.Parse(labelSelector); err == nil && !sel.Empty() {
		s.labels = sel
	}
	sel, err := fields.ParseSelector(fieldSelector)
	if err != nil {
		return s
	}
	for _, r := range sel.Requirements() {
		if r.Field != fieldName && r.Field != fieldNamespace {
			continue
		}
		s.fields = append(s.fields, fieldRule{
			namespace: r.Field == fieldNamespace,
			value:     r.Value,
			equal:     r.Operator != selection.NotEquals,
		})
	}
	return s
}

// everything reports whether s admits every object (the zero scope: a
// ListerWatcher of the whole resource), so that admitObject skips admit.
func (s *scope) everything() bool {
	return s.namespace == "" && s.labels == nil && len(s.fields) == 0
}

// admit returns nil if the object whose metadata is m, called name in
// namespace ns (m's own, read once by the caller), is in scope, and an
// error wrapping ErrOutOfScope that says why not otherwise.
func (s *scope) admit(m metav1.Object, name, ns string) error {
	if s.namespace != "" && ns != s.namespace {
		return fmt.Errorf("%w: %q is in namespace %q, the reflector watches %q",
			ErrOutOfScope, clip(objkey.Join(ns, name)), clip(ns), s.namespace)
	}
	if s.labels != nil && !s.labels.Matches(labels.Set(m.GetLabels())) {
		return fmt.Errorf("%w: the labels of %q do not match %q", ErrOutOfScope, clip(objkey.Join(ns, name)), s.labels)
	}
	for _, f := range s.fields {
		field, got := fieldName, name
		if f.namespace {
			field, got = fieldNamespace, ns
		}
		if (got == f.value) != f.equal {
			return fmt.Errorf("%w: %q does not match the field selector on %s", ErrOutOfScope, clip(objkey.Join(ns, name)), field)
		}
	}
	return nil
}

// maxQuoted is how much of a server's string an error message quotes: a
// name can be as long as a hostile server likes, and an error is logged.
const maxQuoted = 100

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	return s[:maxQuoted] + fmt.Sprintf("...(%d bytes)", len(s))
}
