package fakeapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed31a95821/informer/fakeapi/internal/admission"
)

// serveGet answers GET on one object (or its status).
func (s *Server) serveGet(w http.ResponseWriter, r *http.Request, req requestInfo) {
	enc, err := s.negotiateResource(r, req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.mu.Lock()
	obj, err := s.store.get(req.res, req.namespace, req.name)
	s.mu.Unlock()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeObject(w, r, enc, http.StatusOK, obj)
}

// serveCreate answers POST on a collection: 201 with the stored object.
func (s *Server) serveCreate(w http.ResponseWriter, r *http.Request, req requestInfo) {
	s.serveBodyWrite(w, r, req, http.StatusCreated, func(st *store, obj runtime.Object) (runtime.Object, error) {
		admission.Default(obj)
		if err := st.track(req, obj, nil); err != nil {
			return nil, err
		}
		if err := s.admitCreate(st, req, obj); err != nil {
			return nil, err
		}
		if err := admitThroughView(req, obj, nil); err != nil {
			return nil, err
		}
		return st.create(req.res, obj)
	})
}

// serveUpdate answers PUT on an object or its status.
func (s *Server) serveUpdate(w http.ResponseWriter, r *http.Request, req requestInfo) {
	s.serveBodyWrite(w, r, req, http.StatusOK, func(st *store, obj runtime.Object) (runtime.Object, error) {
		return st.updateSubresource(req, obj)
	})
}

// serveBodyWrite is the shape every write that carries an object follows:
// negotiate the answer's encoding, decode the body, apply it to the store
// under the lock, answer with the stored result and the given status.
func (s *Server) serveBodyWrite(w http.ResponseWriter, r *http.Request, req requestInfo, status int,
	apply func(st *store, obj runtime.Object) (runtime.Object, error)) {
	enc, err := s.negotiateResource(r, req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	obj, err := s.decodeObject(r, req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	stored, err := s.write(func(st *store) (runtime.Object, error) { return apply(st, obj) })
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeObject(w, r, enc, status, stored)
}

// updateSubresource applies the real server's split between an object and
// its status: for a resource with a status subresource, a write to the
// object keeps the stored status, and a write to /status cannot change the
// spec (statusWriteRules in defaults.go lists what else it cannot change).
// Controllers depend on this to avoid overwriting each other. Note that,
// as on the real server, the rest of the metadata of a /status write is the
// client's: a pod's labels can change through /status.
//
// It also applies the defaults and validation of admission.go and records
// the write in managedFields (fieldmanager.go).
func (st *store) updateSubresource(req requestInfo, obj runtime.Object) (runtime.Object, error) {
	if req.subresource != "" && !req.res.StatusSubresource {
		return nil, notFoundPath()
	}
	stored, err := st.get(req.res, req.namespace, req.name)
	if err != nil {
		return nil, err
	}
	return st.updateRules(req, obj, stored, true)
}

// updateTracked is updateSubresource for an object whose managedFields
// are already up to date (a server-side apply).
func (st *store) updateTracked(req requestInfo, obj, stored runtime.Object) (runtime.Object, error) {
	return st.updateRules(req, obj, stored, false)
}

// updateRules applies the update rules to obj, a new state of stored.
func (st *store) updateRules(req requestInfo, obj, stored runtime.Object, track bool) (runtime.Object, error) {
	// The resourceVersion precondition comes first: a stale write is a
	// Conflict even when it would not validate. Custom resources allow no
	// unconditional update.
	switch rv := resourceVersionOf(obj); {
	case rv == "" && req.res.unstructured:
		// The real server names the resource, not the kind, here.
		gk := schema.GroupKind{Group: req.res.Kind.Group, Kind: req.res.gvr.Resource}
		return nil, apierrors.NewInvalid(gk, req.name, field.ErrorList{
			field.Invalid(field.NewPath("metadata", "resourceVersion"), 0, "must be specified for an update")})
	case rv != "" && rv != resourceVersionOf(stored):
		return nil, conflict(req.res.groupResource(), req.name)
	}
	if u, ok := obj.(*unstructured.Unstructured); ok && req.res.StatusSubresource {
		keepUnstructured(u, stored.(*unstructured.Unstructured), req.subresource)
	} else if req.res.StatusSubresource {
		keep := "Status"
		if req.subresource == "status" {
			keep = "Spec"
			statusWriteRules(obj, stored)
		}
		if field := reflect.ValueOf(obj).Elem().FieldByName(keep); field.IsValid() {
			// stored is shared with readers: copy before taking a part of it.
			field.Set(reflect.ValueOf(stored.DeepCopyObject()).Elem().FieldByName(keep))
		}
	}
	if err := admission.AdmitUpdate(req.res.Kind.GroupKind(), obj, stored, req.subresource); err != nil {
		return nil, err
	}
	if err := admitThroughView(req, obj, stored); err != nil {
		return nil, err
	}
	if deleted, gone, err := st.finalizerRules(req.res, obj, stored); err != nil || gone {
		return deleted, err
	}
	if track {
		if err := st.track(req, obj, stored); err != nil {
			return nil, err
		}
	}
	return st.update(req.res, obj)
}

// serveDelete answers DELETE on an object, honouring the preconditions of
// a DeleteOptions body. It answers 200 with the object's final state.
func (s *Server) serveDelete(w http.ResponseWriter, r *http.Request, req requestInfo) {
	enc, err := s.negotiateResource(r, req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var pre preconditions
	opts, err := s.decodeDeleteOptions(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if p := opts.Preconditions; p != nil {
		if p.UID != nil {
			pre.uid = *p.UID
		}
		if p.ResourceVersion != nil {
			pre.resourceVersion = *p.ResourceVersion
		}
	}
	deleted, err := s.write(func(st *store) (runtime.Object, error) {
		return s.deleteOne(st, req, req.namespace, req.name, pre, opts)
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeObject(w, r, enc, http.StatusOK, deleted)
}

// readBody reads the whole request body within the size limit.
func readBody(r *http.Request) ([]byte, error) {
	data, err := io.ReadAll(r.Body)
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", tooBig.Limit))
	}
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("reading request body: %v", err))
	}
	return data, nil
}

// requestSerializer finds the decoder for the request's Content-Type.
func (s *Server) requestSerializer(r *http.Request) (runtime.SerializerInfo, error) {
	contentType := r.Header.Get("Content-Type")
	mediaType := mediaJSON
	if contentType != "" {
		mt, _, err := mime.ParseMediaType(contentType)
		if err != nil {
			return runtime.SerializerInfo{}, unsupportedMediaType(contentType)
		}
		mediaType = mt
	}
	info, ok := runtime.SerializerInfoForMediaType(s.codecs.SupportedMediaTypes(), mediaType)
	if !ok {
		return runtime.SerializerInfo{}, unsupportedMediaType(contentType)
	}
	return info, nil
}

// decodeObject decodes the body as the resource's kind and checks it
// against the URL, as the real server does before any storage work.
func (s *Server) decodeObject(r *http.Request, req requestInfo) (runtime.Object, error) {
	info, err := s.requestSerializer(r)
	if err != nil {
		return nil, err
	}
	data, err := readBody(r)
	if err != nil {
		return nil, err
	}
	if req.view != nil {
		return s.decodeThroughView(data, info, req)
	}
	return s.decodeBody(data, info, req)
}

// decodeBody is decodeObject once the body is read.
func (s *Server) decodeBody(data []byte, info runtime.SerializerInfo, req requestInfo) (runtime.Object, error) {
	into, err := s.newObject(req.res)
	if err != nil {
		return nil, err
	}
	obj, gvk, err := info.Serializer.Decode(data, &req.res.Kind, into)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body of the request could not be decoded as %s: %v", req.res.Kind.Kind, err))
	}
	if *gvk != req.res.Kind {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the kind in the body (%s) does not match the expected kind (%s)", gvk, req.res.Kind))
	}
	if err := s.checkFields(req, data, info.MediaType, nil); err != nil {
		return nil, err
	}
	dropRoundTrip(obj)
	return obj, checkIdentity(obj, req)
}

// checkFields applies the request's fieldValidation directive to the
// fields of data (the body, or a patched document when patched is set)
// that its kind does not have (fakeapi/internal/admission). Custom resources,
// which have no Go type here, are not checked.
func (s *Server) checkFields(req requestInfo, data []byte, mediaType string, patched []byte) error {
	if req.res.unstructured || req.fieldValidation == admission.Ignore { // Ignore: nothing to find
		return nil
	}
	into, err := s.newObject(req.res)
	if err != nil {
		return nil
	}
	unknown := s.strict.UnknownFields(data, mediaType, req.res.Kind, into)
	return admission.CheckFields(req.fieldValidation, req.res.Kind, unknown, patched, req.warnings)
}

// checkIdentity checks the object's namespace and name against the URL,
// filling the namespace in when the body leaves it out.
func checkIdentity(obj runtime.Object, req requestInfo) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if !req.res.ClusterScoped {
		switch m.GetNamespace() {
		case "":
			m.SetNamespace(req.namespace)
		case req.namespace:
		default:
			return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
	}
	if req.name != "" && m.GetName() != req.name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), req.name))
	}
	return nil
}

// decodeDeleteOptions reads an optional DeleteOptions body.
func (s *Server) decodeDeleteOptions(r *http.Request) (metav1.DeleteOptions, error) {
	var opts metav1.DeleteOptions
	data, err := readBody(r)
	if err != nil {
		return opts, err
	}
	if len(data) == 0 {
		// Without a body, the options come from the query, as in
		// "kubectl delete --grace-period=0" (?gracePeriodSeconds=0).
		if g := r.URL.Query().Get("gracePeriodSeconds"); g != "" {
			seconds, err := strconv.ParseInt(g, 10, 64)
			if err != nil {
				return opts, apierrors.NewBadRequest(fmt.Sprintf("gracePeriodSeconds %q is not an integer", g))
			}
			opts.GracePeriodSeconds = &seconds
		}
		return opts, nil
	}
	info, err := s.requestSerializer(r)
	if err != nil {
		return opts, err
	}
	defaultGVK := metav1.SchemeGroupVersion.WithKind("DeleteOptions")
	if info.MediaType == mediaJSON {
		// The real server takes DeleteOptions in every served group
		// version, a custom resource's too (client-go sends the
		// resource's), and the scheme knows only the built-in groups.
		var tm metav1.TypeMeta
		if err := json.Unmarshal(data, &tm); err == nil && tm.Kind == defaultGVK.Kind {
			data, err = withAPIVersion(data, defaultGVK.GroupVersion().String())
			if err != nil {
				return opts, apierrors.NewBadRequest(fmt.Sprintf("the body of the request could not be decoded as DeleteOptions: %v", err))
			}
		}
	}
	if _, _, err := info.Serializer.Decode(data, &defaultGVK, &opts); err != nil {
		return opts, apierrors.NewBadRequest(fmt.Sprintf("the body of the request could not be decoded as DeleteOptions: %v", err))
	}
	return opts, nil
}

// withAPIVersion returns the JSON object data with its apiVersion replaced.
func withAPIVersion(data []byte, apiVersion string) ([]byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, err
	}
	fields["apiVersion"], _ = json.Marshal(apiVersion)
	return json.Marshal(fields)
}

func resourceVersionOf(obj runtime.Object) string {
	if m, err := meta.Accessor(obj); err == nil {
		return m.GetResourceVersion()
	}
	return ""
}
