package fakeapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
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
// Where the other managers' entries were recorded by fakeapi's own
// approximate tracker (managedfields.go: lists owned as a whole), a
// conflict may name a whole list where the real server names one item.

// applyTypes holds the type converters, built on first use.
type applyTypes struct {
	once    sync.Once
	typed   managedfields.TypeConverter
	deduced managedfields.TypeConverter
	err     error

	mu       sync.Mutex // guards managers
	managers map[*resourceInfo]*managedfields.FieldManager
}

// fieldManagerFor returns the resource's field manager, building it once.
func (s *Server) fieldManagerFor(ri *resourceInfo) (*managedfields.FieldManager, error) {
	at := &s.apply
	at.once.Do(func() { at.typed, at.err = s.buildTypeConverter() })
	if at.err != nil {
		return nil, at.err
	}
	at.mu.Lock()
	defer at.mu.Unlock()
	if fm := at.managers[ri]; fm != nil {
		return fm, nil
	}
	converter := at.typed
	if converter == nil || !s.openapiKnows(ri) {
		if at.deduced == nil {
			at.deduced = managedfields.NewDeducedTypeConverter()
		}
		converter = at.deduced
	}
	var reset map[fieldpath.APIVersion]fieldpath.Filter
	if ri.StatusSubresource {
		// As the real strategies do: applying to the object never takes
		// ownership of its status, which is written through /status.
		reset = map[fieldpath.APIVersion]fieldpath.Filter{
			fieldpath.APIVersion(ri.Kind.GroupVersion().String()): fieldpath.NewExcludeSetFilter(
				fieldpath.NewSet(fieldpath.MakePathOrDie("status"))),
		}
	}
	var fm *managedfields.FieldManager
	var err error
	if ri.unstructured {
		fm, err = newCRFieldManager(ri, converter)
	} else {
		fm, err = managedfields.NewDefaultFieldManager(converter, s.opts.Scheme, applyDefaulter{}, s.opts.Scheme,
			ri.Kind, ri.Kind.GroupVersion(), "", reset)
	}
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if at.managers == nil {
		at.managers = map[*resourceInfo]*managedfields.FieldManager{}
	}
	at.managers[ri] = fm
	return fm, nil
}

// applyDefaulter applies fakeapi's defaults (poddefaults.go) where the
// field manager defaults an applied object, so that applying what is
// already defaulted is a no-op.
type applyDefaulter struct{}

func (applyDefaulter) Default(obj runtime.Object) { applyDefaults(obj) }

// buildTypeConverter reads the schemas of the served built-in group
// versions from the OpenAPI v3 documents.
func (s *Server) buildTypeConverter() (managedfields.TypeConverter, error) {
	if err := s.openapi.load(s.reg); err != nil {
		return nil, err
	}
	models := map[string]*spec.Schema{}
	for _, doc := range s.openapi.v3 {
		var parsed struct {
			Components struct {
				Schemas map[string]*spec.Schema `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(doc.data, &parsed); err != nil {
			return nil, fmt.Errorf("fakeapi: reading the OpenAPI schemas: %w", err)
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
// resource's kind (a custom Go type registered by a test is not).
func (s *Server) openapiKnows(ri *resourceInfo) bool {
	path := "apis/" + ri.Kind.GroupVersion().String()
	if ri.Kind.Group == "" {
		path = "api/" + ri.Kind.Version
	}
	if _, recorded := s.openapi.v3[path]; !recorded {
		return false
	}
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
	fm, err := s.fieldManagerFor(req.res)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	created := false
	stored, err := s.write(func(st *store) (runtime.Object, error) {
		live, err := st.get(req.res, req.namespace, req.name)
		created = apierrors.IsNotFound(err)
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
		stampApplyTime(obj, req.fieldManager, st.now())
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
	if req.subresource != "" {
		return nil, false, unsupportedPatch(mediaApply, "fakeapi: server-side apply to a subresource is not supported")
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
		err = json.Unmarshal(data, &doc)
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
	if err := checkIdentity(patchObj, req); err != nil {
		return nil, false, err
	}
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

// stampApplyTime sets the time of the applier's entry from the server's
// clock (Options.Now), which the field manager does not know of.
func stampApplyTime(obj runtime.Object, manager string, now time.Time) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	entries := m.GetManagedFields()
	for i := range entries {
		if entries[i].Manager == manager && entries[i].Operation == metav1.ManagedFieldsOperationApply && entries[i].Subresource == "" {
			entries[i].Time = &metav1.Time{Time: now.Truncate(time.Second)}
		}
	}
	m.SetManagedFields(entries)
}

// applyError keeps the field manager's API errors (409 Conflict with one
// cause per conflicting field) and makes the others a 500.
func applyError(err error) error {
	var api apierrors.APIStatus
	if errors.As(err, &api) {
		return err
	}
	return apierrors.NewInternalError(err)
}
