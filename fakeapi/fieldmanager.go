package fakeapi

import (
	"errors"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed31a95821/informer/fakeapi/internal/apply"
	"github.com/seed31a95821/informer/fakeapi/internal/patch"
)

// managedFields and server-side apply. kube-apiserver records, in
// metadata.managedFields, which client last set which fields of every
// object, one entry per writer (the "field manager"), for every create,
// update and patch, not only for server-side apply; so every object a real
// server sends carries this bookkeeping, often a fifth or more of its
// bytes. fakeapi records it too, for HTTP writes, so that clients meet
// realistic objects (and a transform that strips managedFields has
// something to strip), and so that server-side apply finds the owners it
// must not overwrite. Writes through the Go API (Server.Create, Update)
// record nothing: they come from no client.
//
// The machinery is fakeapi/internal/apply's (apimachinery's managedfields package,
// with the recorded schemas, and an approximation where it cannot be
// used); this file connects it to requests: trackWrite records every HTTP
// write, serveApply answers an apply patch. A write to /scale is tracked on
// its Scale and translated to the workload (scale.go).

// fieldManagerFor returns the field manager of a resource or one of its
// subresources (fakeapi/internal/apply builds each once).
func (s *Server) fieldManagerFor(ri *resourceInfo, subresource string) (*managedfields.FieldManager, error) {
	return s.apply.For(applyTarget(ri), subresource)
}

// applyTarget describes a served resource to fakeapi/internal/apply.
func applyTarget(ri *resourceInfo) apply.Target {
	return apply.Target{Kind: ri.Kind, StatusSubresource: ri.StatusSubresource, Unstructured: ri.unstructured}
}

// isDefaultKind tells whether kind is one of DefaultResources, which the
// recorded OpenAPI documents describe; a custom Go type registered by a
// test, or a custom resource, is not. fakeapi/internal/apply asks once per field
// manager it builds.
func isDefaultKind(kind schema.GroupVersionKind) bool {
	for _, r := range DefaultResources() {
		if r.Kind == kind {
			return true
		}
	}
	return false
}

// writer names req's write for the managedFields approximation.
func (req requestInfo) writer() apply.Writer {
	return apply.Writer{Manager: req.fieldManager, APIVersion: req.res.Kind.GroupVersion().String(), Subresource: req.subresource}
}

// trackWrite records an HTTP write of obj over live (nil for a create) by
// req's field manager. A write through a view is tracked in the view's
// version, with its paths, as the real server tracks a write in the
// version of the request (and as serveApply does).
func (s *Server) trackWrite(req requestInfo, obj, live runtime.Object, now time.Time) error {
	if req.view == nil || req.subresource == "scale" {
		return s.trackIn(req, obj, live, now)
	}
	shownObj, err := req.shown(obj)
	if err != nil {
		return err
	}
	var shownLive runtime.Object
	if live != nil {
		if shownLive, err = req.shown(live); err != nil {
			return err
		}
	}
	if err := s.trackIn(req.asView(), shownObj, shownLive, now); err != nil {
		return err
	}
	return copyManagedFields(obj, shownObj)
}

// trackIn records a write of obj over live by req's field manager, in
// req.res's version (obj and live are of it).
func (s *Server) trackIn(req requestInfo, obj, live runtime.Object, now time.Time) error {
	if req.subresource == "scale" {
		// Only when scale.go's trackScale could not use the Scale's field
		// manager: the Scale's fields are not the workload's.
		return apply.Record(obj, live, req.writer(), now)
	}
	fm, err := s.fieldManagerFor(req.res, req.subresource)
	if err != nil {
		return apply.Record(obj, live, req.writer(), now)
	}
	if live == nil {
		if live, err = s.newObject(req.res); err != nil {
			return err
		}
	}
	out, err := fm.Update(live, obj, req.fieldManager)
	if err != nil {
		// As the real server does, a write whose fields cannot be
		// tracked is not refused for it; the approximation records it.
		return apply.Record(obj, live, req.writer(), now)
	}
	if err := copyManagedFields(obj, out); err != nil {
		return err
	}
	apply.StampTimes(obj, live, now)
	return nil
}

// serveApply answers PATCH with an apply patch.
func (s *Server) serveApply(w http.ResponseWriter, r *http.Request, req requestInfo, enc encoding) {
	// The patch, and the field manager that applies it, are of the
	// version the client speaks: a view's, on a view (views.go).
	spoken := req
	if req.view != nil {
		spoken = req.asView()
	}
	patchObj, force, err := s.decodeApply(r, spoken)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	fm, err := s.fieldManagerFor(spoken.res, req.subresource)
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
		shown, err := req.shown(live)
		if err != nil {
			return nil, err
		}
		obj, err := fm.Apply(shown, patchObj, req.fieldManager, force)
		if err != nil {
			return nil, apply.Error(err)
		}
		apply.StampTimes(obj, shown, st.now())
		if obj, err = req.stored(obj); err != nil {
			return nil, err
		}
		dropRoundTrip(obj)
		if created {
			if err := s.admitCreate(st, req, obj); err != nil {
				return nil, err
			}
			if err := admitThroughView(req, obj, nil); err != nil {
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
		return nil, false, patch.Unsupported("fakeapi: server-side apply to a subresource other than status is not supported")
	}
	if r.URL.Query().Get("fieldManager") == "" {
		return nil, false, apierrors.NewInvalid(metav1.SchemeGroupVersion.WithKind("PatchOptions").GroupKind(), "",
			field.ErrorList{field.Required(field.NewPath("fieldManager"), "is required for apply patch")})
	}
	body, err := readBody(r)
	if err != nil {
		return nil, false, err
	}
	patchObj, err := apply.DecodePatch(body, req.res.Kind)
	if err != nil {
		return nil, false, err
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

// copyManagedFields sets dst's managedFields to src's.
func copyManagedFields(dst, src runtime.Object) error {
	m, err := meta.Accessor(dst)
	sm, err2 := meta.Accessor(src)
	if err != nil || err2 != nil {
		return apierrors.NewInternalError(errors.Join(err, err2))
	}
	m.SetManagedFields(sm.GetManagedFields())
	return nil
}
