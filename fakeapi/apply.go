package fakeapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/yaml"
)

// Server-side apply (Content-Type application/apply-patch+yaml): the
// client sends the fields it wants to own, as a partial object; the server
// merges them into the live object, records the client (the required
// fieldManager) as their owner in managedFields, and refuses with 409
// Conflict to change a field another manager owns, unless ?force=true
// takes it over. A field the manager owned before and no longer sends is
// removed. Apply creates the object if it does not exist.
//
// The merge, the ownership bookkeeping and the conflicts are apimachinery's
// managedfields package (structured-merge-diff), the real server's own
// machinery. It needs the type's schema: for the built-in types, the
// OpenAPI v3 documents of openapi.go (list types, map keys); for other
// types, a schema deduced from the objects, which treats every list as
// atomic, as the real server does for custom resources without one.
//
// The same field managers record every other HTTP write (managedfields.go),
// so the owners an apply meets are the ones the real server would record.

// applyTypes holds the server's field managers and the deduced converter
// for types the recorded schemas do not describe (the typed converter is
// shared by the process: sharedTypeConverter).
type applyTypes struct {
	mu       sync.Mutex // guards deduced and managers
	deduced  managedfields.TypeConverter
	managers map[managerKey]*managedfields.FieldManager
}

// managerKey names a field manager: one per resource and subresource.
type managerKey struct {
	res         *resourceInfo
	subresource string
}

// forget drops the field managers of a resource that is no longer served,
// so that creating and deleting CRDs does not grow the cache without bound.
func (at *applyTypes) forget(ri *resourceInfo) {
	at.mu.Lock()
	defer at.mu.Unlock()
	for k := range at.managers {
		if k.res == ri {
			delete(at.managers, k)
		}
	}
}

// fieldManagerFor returns the field manager of a resource or one of its
// subresources, building it once.
func (s *Server) fieldManagerFor(ri *resourceInfo, subresource string) (*managedfields.FieldManager, error) {
	typed, err := sharedTypeConverter()
	if err != nil {
		return nil, err
	}
	at := &s.apply
	at.mu.Lock()
	defer at.mu.Unlock()
	key := managerKey{ri, subresource}
	if fm := at.managers[key]; fm != nil {
		return fm, nil
	}
	converter := typed
	if converter == nil || !s.openapiKnows(ri) {
		if at.deduced == nil {
			at.deduced = managedfields.NewDeducedTypeConverter()
		}
		converter = at.deduced
	}
	var reset map[fieldpath.APIVersion]fieldpath.Filter
	if ri.StatusSubresource {
		// As the real strategies do: applying to the object never takes
		// ownership of its status, which is written through /status, and
		// applying to /status never takes the spec.
		other := "status"
		if subresource == "status" {
			other = "spec"
		}
		reset = map[fieldpath.APIVersion]fieldpath.Filter{
			fieldpath.APIVersion(ri.Kind.GroupVersion().String()): fieldpath.NewExcludeSetFilter(
				fieldpath.NewSet(fieldpath.MakePathOrDie(other))),
		}
	}
	var fm *managedfields.FieldManager
	switch {
	case subresource == "scale":
		// The field manager of a /scale write tracks the Scale, whose
		// owners scale.go translates to and from the workload's.
		fm, err = managedfields.NewDefaultFieldManager(typed, s.opts.Scheme, applyDefaulter{}, s.opts.Scheme,
			scaleKind, scaleKind.GroupVersion(), subresource, nil)
	case ri.unstructured:
		fm, err = newCRFieldManager(ri, converter, subresource)
	default:
		fm, err = managedfields.NewDefaultFieldManager(converter, s.opts.Scheme, applyDefaulter{}, s.opts.Scheme,
			ri.Kind, ri.Kind.GroupVersion(), subresource, reset)
	}
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if at.managers == nil {
		at.managers = map[managerKey]*managedfields.FieldManager{}
	}
	at.managers[key] = fm
	return fm, nil
}

// applyDefaulter applies fakeapi's defaults (poddefaults.go) where the
// field manager defaults an applied object, so that applying what is
// already defaulted is a no-op.
type applyDefaulter struct{}

func (applyDefaulter) Default(obj runtime.Object) { applyDefaults(obj) }

// builtinTypes is the type converter of the built-in kinds, built on first
// use from the embedded OpenAPI v3 documents. It is a pure function of
// those constant documents, immutable and safe for concurrent use, so every
// Server in the process shares it: building it takes tens of milliseconds
// (docs/perf-log.md), which a test suite that starts hundreds of servers
// should pay once, not once per server.
var builtinTypes struct {
	once      sync.Once
	converter managedfields.TypeConverter
	err       error
}

// sharedTypeConverter returns the shared converter of the built-in kinds.
func sharedTypeConverter() (managedfields.TypeConverter, error) {
	builtinTypes.once.Do(func() { builtinTypes.converter, builtinTypes.err = loadTypeConverter() })
	return builtinTypes.converter, builtinTypes.err
}

// loadTypeConverter reads the schemas of every recorded group version.
func loadTypeConverter() (managedfields.TypeConverter, error) {
	names, err := fs.Glob(openapiFiles, "openapi/v3/*.json.gz")
	if err != nil {
		return nil, err
	}
	models := map[string]*spec.Schema{}
	for _, name := range names {
		doc, err := loadOpenAPIDoc(name)
		if err != nil {
			return nil, err
		}
		var parsed struct {
			Components struct {
				Schemas map[string]*spec.Schema `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(doc.data, &parsed); err != nil {
			return nil, fmt.Errorf("fakeapi: reading the OpenAPI schemas of %s: %w", name, err)
		}
		for name, schema := range parsed.Components.Schemas {
			models[name] = schema
		}
	}
	converter, err := managedfields.NewTypeConverter(models, false)
	if err != nil {
		return nil, fmt.Errorf("fakeapi: building the apply schemas: %w", err)
	}
	return converter, nil
}

// openapiKnows tells whether the recorded OpenAPI documents describe the
// resource's kind: the built-in kinds do, a custom Go type registered by a
// test does not.
func (s *Server) openapiKnows(ri *resourceInfo) bool {
	for _, r := range DefaultResources() {
		if r.Kind == ri.Kind {
			return true
		}
	}
	return false
}

// serveApply answers PATCH with an apply patch.
func (s *Server) serveApply(w http.ResponseWriter, r *http.Request, req requestInfo, enc encoding) {
	patchObj, force, err := s.decodeApply(r, req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	fm, err := s.fieldManagerFor(req.res, req.subresource)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	created := false
	stored, err := s.write(func(st *store) (runtime.Object, error) {
		live, err := st.get(req.res, req.namespace, req.name)
		// An apply creates a missing object, but not through /status: a
		// status needs an object to belong to.
		created = apierrors.IsNotFound(err) && req.subresource == ""
		if created {
			live, err = s.newNamed(req)
		}
		if err != nil {
			return nil, err
		}
		obj, err := fm.Apply(live, patchObj, req.fieldManager, force)
		if err != nil {
			return nil, applyError(err)
		}
		stampTimes(obj, live, st.now())
		if created {
			if err := s.admitCreate(st, req, obj); err != nil {
				return nil, err
			}
			return st.create(req.res, obj)
		}
		return st.updateTracked(req, obj, live)
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	s.writeObject(w, r, enc, code, stored)
}

// decodeApply checks an apply request and decodes its patch: YAML or
// JSON, a whole object of the resource's kind, named as the URL names it,
// without managedFields, from a named field manager.
func (s *Server) decodeApply(r *http.Request, req requestInfo) (*unstructured.Unstructured, bool, error) {
	if req.subresource != "" && (req.subresource != "status" || !req.res.StatusSubresource) {
		return nil, false, unsupportedPatch(mediaApply, "fakeapi: server-side apply to a subresource other than status is not supported")
	}
	if r.URL.Query().Get("fieldManager") == "" {
		return nil, false, apierrors.NewInvalid(metav1.SchemeGroupVersion.WithKind("PatchOptions").GroupKind(), "",
			field.ErrorList{field.Required(field.NewPath("fieldManager"), "is required for apply patch")})
	}
	body, err := readBody(r)
	if err != nil {
		return nil, false, err
	}
	data, err := yaml.YAMLToJSON(body)
	if err == nil {
		err = checkJSONDepth(data, maxJSONDepth)
	}
	var doc map[string]any
	if err == nil {
		err = utiljson.Unmarshal(data, &doc) // integers stay int64, as on the real server
	}
	if err != nil {
		return nil, false, apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
	}
	patchObj := &unstructured.Unstructured{Object: doc}
	if gvk := patchObj.GroupVersionKind(); gvk != req.res.Kind {
		return nil, false, apierrors.NewBadRequest(fmt.Sprintf("the apply patch is a %s, not a %s", gvk, req.res.Kind))
	}
	if patchObj.GetManagedFields() != nil {
		return nil, false, apierrors.NewBadRequest("metadata.managedFields must be nil")
	}
	sentNamespace := patchObj.GetNamespace()
	if err := checkIdentity(patchObj, req); err != nil {
		return nil, false, err
	}
	// The patch keeps the namespace it was sent with, as on the real
	// server, which does not fill it in: the live object has the URL's,
	// and the field manager's errors name the patch as sent ("/d; apps/v1,
	// Kind=Deployment" for a patch without one).
	patchObj.SetNamespace(sentNamespace)
	return patchObj, r.URL.Query().Get("force") == "true", nil
}

// newNamed is the empty object an apply that creates starts from.
func (s *Server) newNamed(req requestInfo) (runtime.Object, error) {
	obj, err := s.newObject(req.res)
	if err != nil {
		return nil, err
	}
	obj.GetObjectKind().SetGroupVersionKind(req.res.Kind)
	m, _ := meta.Accessor(obj)
	m.SetName(req.name)
	m.SetNamespace(req.namespace)
	return obj, nil
}

// stampTimes sets the time of every managedFields entry this write
// changed from the server's clock (Options.Now), which the field manager
// does not know of; the entries it left alone keep theirs.
func stampTimes(obj, live runtime.Object, now time.Time) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	var before []metav1.ManagedFieldsEntry
	if lm, err := meta.Accessor(live); err == nil {
		before = lm.GetManagedFields()
	}
	entries := m.GetManagedFields()
	for i := range entries {
		unchanged := slices.ContainsFunc(before, func(b metav1.ManagedFieldsEntry) bool {
			return sameEntry(b, entries[i])
		})
		if !unchanged {
			entries[i].Time = &metav1.Time{Time: now.Truncate(time.Second)}
		}
	}
	m.SetManagedFields(entries)
}

// sameEntry compares two entries but for their time.
func sameEntry(a, b metav1.ManagedFieldsEntry) bool {
	a.Time, b.Time = nil, nil
	return equality.Semantic.DeepEqual(a, b)
}

// applyError keeps the field manager's API errors (409 Conflict with one
// cause per conflicting field) and answers the others as kube-apiserver
// does: its field manager returns them as plain Go errors, which its
// handler sends as a 500 whose message is the error's text, with no reason
// and no details. The commonest is an apply patch with a field the type
// does not declare ("failed to create typed patch object (ns/d; apps/v1,
// Kind=Deployment): .spec.bogus: field not declared in schema"): a 500, not
// a 4xx, whatever fieldValidation says (TestApplyUndeclaredField;
// docs/fakeapi.md).
func applyError(err error) error {
	var api apierrors.APIStatus
	if errors.As(err, &api) {
		return err
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
		Reason: metav1.StatusReasonUnknown, Message: err.Error(),
	}}
}
