package fakeapi

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// parseListOptions reads the query of a list or watch with apimachinery's
// own parameter codec and validates it with the real server's rules, so
// that option combinations the real server rejects (resourceVersionMatch
// without resourceVersion, sendInitialEvents on a list, ...) are rejected
// here too, with the same 422 Invalid.
func parseListOptions(r *http.Request, req requestInfo) (metainternalversion.ListOptions, error) {
	var opts metainternalversion.ListOptions
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(r.URL.Query(), metav1.SchemeGroupVersion, &opts); err != nil {
		return opts, apierrors.NewBadRequest(err.Error())
	}
	// The WatchList feature is on by default in current servers, and
	// client-go v0.37 depends on it.
	if errs := validation.ValidateListOptions(&opts, true); len(errs) > 0 {
		return opts, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	if opts.FieldSelector != nil {
		stored, err := storedFieldSelector(req, opts.FieldSelector)
		if err != nil {
			return opts, err
		}
		opts.FieldSelector = stored
	}
	if opts.Limit < 0 {
		opts.Limit = 0
	}
	return opts, nil
}

// storedFieldSelector checks that a field selector names only labels of
// the resource the client asked for and, on a view, renames them to the
// stored resource's labels, which the filter evaluates, as the real
// server's field label conversion does (an events.k8s.io/v1
// regarding.name is a stored involvedObject.name; involvedObject.name is
// no label of the view).
func storedFieldSelector(req requestInfo, sel fields.Selector) (fields.Selector, error) {
	asked := req.res
	if req.view != nil {
		asked = req.view
	}
	return sel.Transform(func(label, value string) (string, string, error) {
		if !asked.fieldLabels[label] {
			return "", "", unsupportedField(asked, label)
		}
		stored := label
		if asked.view != nil {
			if to, ok := asked.view.fieldLabels[label]; ok {
				stored = to
			}
		}
		if !req.res.fieldLabels[stored] {
			// The stored resource was served without that label
			// (Options.Resources): the view cannot select on it either.
			return "", "", unsupportedField(asked, label)
		}
		return stored, value, nil
	})
}

// filter decides which objects a list or watch sees.
type filter struct {
	res       *resourceInfo
	namespace string // "" means every namespace
	labels    labels.Selector
	fields    fields.Selector
}

func newFilter(req requestInfo, opts metainternalversion.ListOptions) filter {
	f := filter{res: req.res, namespace: req.namespace, labels: opts.LabelSelector, fields: opts.FieldSelector}
	if f.labels == nil {
		f.labels = labels.Everything()
	}
	if f.fields == nil {
		f.fields = fields.Everything()
	}
	return f
}

// selects reports whether the selectors can reject anything.
func (f filter) selects() bool { return !f.labels.Empty() || !f.fields.Empty() }

// matches reports whether obj is in the filter's view.
func (f filter) matches(obj runtime.Object) bool {
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	if f.namespace != "" && m.GetNamespace() != f.namespace {
		return false
	}
	if !f.labels.Empty() && !f.labels.Matches(labels.Set(m.GetLabels())) {
		return false
	}
	return f.fields.Empty() || f.fields.Matches(f.res.fieldsOf(obj))
}

// selectorMatch returns the selector part of matches for a list (whose
// namespace is already a key range), or nil when nothing is filtered.
func (f filter) selectorMatch() func(runtime.Object) bool {
	if !f.selects() {
		return nil
	}
	return f.matches
}

// unsupportedField is the real server's 400 for a field selector on a field
// the resource does not offer. Its wording depends on where the resource's
// field list lives: kinds with their own list (pods, services, ...) say
// "field label not supported"; the others, which offer only name and
// namespace, say so.
func unsupportedField(ri *resourceInfo, field string) error {
	if ri.SelectableFields != nil || (ri.view != nil && ri.view.fieldLabels != nil) {
		return apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", field))
	}
	return apierrors.NewBadRequest(fmt.Sprintf("%q is not a known field selector: only %q, %q",
		field, "metadata.name", "metadata.namespace"))
}
