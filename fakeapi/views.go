package fakeapi

import (
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/fakeapi/internal/convert"
)

// Views. kube-apiserver stores an object once and serves it through every
// version of its API: an Event written through events.k8s.io/v1 is listed
// by kubectl get events through core/v1, with the same resourceVersion, in
// the same watch stream. A view is such a second version of a stored
// resource here: it has no store of its own. A request on a view is served
// as a request on the stored resource (route sets requestInfo.res to it and
// keeps the view in requestInfo.view), with four conversions on the way:
//
//	the body of a create or update    view -> storage      decodeObject
//	a patch                           storage -> view, patched, -> storage   applyPatch
//	a server-side apply               the same, with the view's field manager   serveApply
//	managedFields of other writes     tracked in the view's version          trackWrite
//	every object answered, watched    storage -> view      encoding.encode
//	or listed (lists item by item)
//
// Selectors are evaluated on the stored object, with the view's own field
// labels renamed to the stored resource's (view.fieldLabels, selectors.go's
// storedFieldSelector). The resourceVersion rules, bookmarks and the
// watch's position are the stored resource's, so a watch opened on one
// version sees every write made through the other, at the same
// resourceVersion. Tables are built from the stored object, as the real
// server prints both versions with one printer.

// view is what makes a resourceInfo a second version of another.
type view struct {
	// storage is the resource whose objects the view shows.
	storage *resourceInfo
	// toStorage and fromStorage convert one object; each returns a new one.
	toStorage, fromStorage func(runtime.Object) (runtime.Object, error)
	// admitCreate and admitUpdate, when set, are the rules a write through
	// this version must meet, on the object's stored form (old is the
	// stored state an update replaces).
	admitCreate func(obj runtime.Object) field.ErrorList
	admitUpdate func(obj, old runtime.Object) field.ErrorList
	// fieldLabels, when set, are the view's field-selector labels, each
	// mapped to the stored resource's label it selects on; when nil the
	// view has the stored resource's labels.
	fieldLabels map[string]string
}

// viewSpec describes one built-in view.
type viewSpec struct {
	served  ServedResource
	storage schema.GroupVersionKind
	view    view
}

// builtinViews are the versions kube-apiserver serves of resources stored
// in another: events.k8s.io/v1 Events (stored as core/v1 Events) and
// autoscaling/v1 HorizontalPodAutoscalers (stored as autoscaling/v2).
func builtinViews() []viewSpec {
	events := ServedResource{Resource: apiresource.Guess(convert.EventsEventKind), ShortNames: []string{"ev"}}
	hpa := ServedResource{Resource: apiresource.Guess(convert.HPAv1Kind), ShortNames: []string{"hpa"},
		Categories: []string{"all"}, StatusSubresource: true}
	var out []viewSpec
	for _, p := range convert.Pairs() {
		v := view{toStorage: internalError(p.ToStorage), fromStorage: internalError(p.FromStorage)}
		served := hpa
		if p.View == convert.EventsEventKind {
			served = events
			v.admitCreate = func(obj runtime.Object) field.ErrorList { return convert.ValidateEventsV1Create(obj.(*corev1.Event)) }
			v.admitUpdate = func(obj, old runtime.Object) field.ErrorList {
				return convert.ValidateEventsV1Update(obj.(*corev1.Event), old.(*corev1.Event))
			}
			v.fieldLabels = eventsV1FieldLabels
		}
		out = append(out, viewSpec{served: served, storage: p.Stored, view: v})
	}
	return out
}

// eventsV1FieldLabels are the field selectors of events.k8s.io/v1 Events
// and the core/v1 labels they select on, as kube-apiserver's field label
// conversion for that version maps them: the renamed fields (regarding,
// reportingController) under their new names, and no core/v1 name that
// changed.
var eventsV1FieldLabels = map[string]string{
	"metadata.name": "metadata.name", "metadata.namespace": "metadata.namespace",
	"regarding.kind": "involvedObject.kind", "regarding.namespace": "involvedObject.namespace",
	"regarding.name": "involvedObject.name", "regarding.uid": "involvedObject.uid",
	"regarding.apiVersion": "involvedObject.apiVersion", "regarding.resourceVersion": "involvedObject.resourceVersion",
	"regarding.fieldPath": "involvedObject.fieldPath",
	"reportingController": "reportingComponent",
	"reason":              "reason", "source": "source", "type": "type",
}

// dropRoundTrip removes from an autoscaling/v2 HPA written through
// autoscaling/v2 the annotations in which autoscaling/v1 carries what it
// has no field for, as the real server's v2 decoding does
// (convert.DropRoundTripAnnotations); other objects are left alone.
func dropRoundTrip(obj runtime.Object) {
	if h, ok := obj.(*autoscalingv2.HorizontalPodAutoscaler); ok {
		convert.DropRoundTripAnnotations(h)
	}
}

// internalError makes a conversion's error the 500 a client gets: a
// conversion fails only on a type the view does not hold, a server bug.
func internalError(f func(runtime.Object) (runtime.Object, error)) func(runtime.Object) (runtime.Object, error) {
	return func(obj runtime.Object) (runtime.Object, error) {
		out, err := f(obj)
		if err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("fakeapi: %w", err))
		}
		return out, nil
	}
}

// addViews serves the built-in views whose kinds the scheme knows and
// whose stored resource is served, unless the resource is already served
// on its own (a test that serves events.k8s.io/v1 Events with their own
// store through Options.Resources keeps it).
func (reg *registry) addViews(specs []viewSpec) error {
	for _, spec := range specs {
		storage, ok := reg.byKind(spec.storage)
		if !ok || !reg.scheme.Recognizes(spec.served.Kind) {
			continue
		}
		if _, taken := reg.byResource(spec.served.GVR()); taken {
			continue
		}
		ri, err := resolveResource(reg.scheme, spec.served)
		if err != nil {
			return err
		}
		v := spec.view
		v.storage = storage
		ri.view = &v
		if v.fieldLabels != nil {
			ri.fieldLabels = map[string]bool{}
			for label := range v.fieldLabels {
				ri.fieldLabels[label] = true
			}
		}
		if err := reg.add(ri); err != nil {
			return err
		}
	}
	return nil
}

// stores tells whether the resource has objects of its own: not a view,
// whose objects are another's, nor a review, which stores nothing.
func (ri *resourceInfo) stores() bool { return ri.view == nil && ri.review == nil }

// storedIn is the resource that stores ri's objects: ri itself, or the
// resource ri is a view of.
func (ri *resourceInfo) storedIn() *resourceInfo {
	if ri.view != nil {
		return ri.view.storage
	}
	return ri
}

// asView is the request as the client made it, on the view: what its body
// is decoded and patched as.
func (req requestInfo) asView() requestInfo {
	out := req
	out.res, out.view = req.view, nil
	return out
}

// shown converts a stored object to the version the client speaks: the
// view's, on a view; otherwise it is obj.
func (req requestInfo) shown(obj runtime.Object) (runtime.Object, error) {
	if req.view == nil {
		return obj, nil
	}
	return req.view.view.fromStorage(obj)
}

// stored is the inverse of shown.
func (req requestInfo) stored(obj runtime.Object) (runtime.Object, error) {
	if req.view == nil {
		return obj, nil
	}
	return req.view.view.toStorage(obj)
}

// decodeThroughView decodes a body sent to a view and converts it to the
// stored form.
func (s *Server) decodeThroughView(data []byte, info runtime.SerializerInfo, req requestInfo) (runtime.Object, error) {
	obj, err := s.decodeBody(data, info, req.asView())
	if err != nil {
		return nil, err
	}
	return req.view.view.toStorage(obj)
}

// admitThroughView applies the view's own rules to a write through it, on
// the stored form of obj; old is nil for a create.
func admitThroughView(req requestInfo, obj, old runtime.Object) error {
	if req.view == nil {
		return nil
	}
	v := req.view.view
	var errs field.ErrorList
	switch {
	case old == nil && v.admitCreate != nil:
		errs = v.admitCreate(obj)
	case old != nil && v.admitUpdate != nil:
		errs = v.admitUpdate(obj, old)
	}
	if len(errs) == 0 {
		return nil
	}
	m, _ := meta.Accessor(obj)
	return apierrors.NewInvalid(req.view.Kind.GroupKind(), m.GetName(), errs)
}

// showThrough returns the conversion of stored objects, and of lists of
// them, to the view ri, for encoding.
func (s *Server) showThrough(ri *resourceInfo) func(runtime.Object) (runtime.Object, error) {
	return func(obj runtime.Object) (runtime.Object, error) {
		if !meta.IsListType(obj) {
			return ri.view.fromStorage(obj)
		}
		return s.listThrough(ri, obj)
	}
}

// listThrough converts a list of stored objects to the view's list kind,
// keeping its list metadata; the items, as in every list, carry no kind.
func (s *Server) listThrough(ri *resourceInfo, list runtime.Object) (runtime.Object, error) {
	out, err := s.newList(ri)
	if err != nil {
		return nil, err
	}
	out.GetObjectKind().SetGroupVersionKind(ri.listKind)
	from, err := meta.ListAccessor(list)
	if err != nil {
		return nil, err
	}
	to, err := meta.ListAccessor(out)
	if err != nil {
		return nil, err
	}
	to.SetResourceVersion(from.GetResourceVersion())
	to.SetContinue(from.GetContinue())
	to.SetRemainingItemCount(from.GetRemainingItemCount())
	var items []runtime.Object
	err = meta.EachListItem(list, func(item runtime.Object) error {
		shown, err := ri.view.fromStorage(item)
		if err == nil {
			shown.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
			items = append(items, shown)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, meta.SetList(out, items)
}

// storedForm resolves a write of the Go API: for a view, the stored
// resource and obj converted to it; otherwise ri and obj.
func storedForm(ri *resourceInfo, obj runtime.Object) (*resourceInfo, runtime.Object, error) {
	if ri.view == nil {
		return ri, obj, nil
	}
	stored, err := ri.view.toStorage(obj)
	return ri.storedIn(), stored, err
}

// shownForm converts a result of the Go API back to the view it was
// asked through (ri), if ri is one.
func shownForm(ri *resourceInfo, obj runtime.Object, err error) (runtime.Object, error) {
	if err != nil || ri.view == nil {
		return obj, err
	}
	return ri.view.fromStorage(obj)
}
