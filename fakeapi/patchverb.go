package fakeapi

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer/fakeapi/internal/patch"
)

// The PATCH verb. fakeapi/internal/patch decodes the patch types of the real server
// (JSON merge, strategic merge, JSON patch) and fakeapi/internal/apply the fourth,
// server-side apply. Every patch is applied inside the store's critical
// section, so it always applies to the latest state; a resourceVersion
// inside the patch acts as a precondition, exactly as in an update.

// servePatch answers PATCH with any of the patch types.
func (s *Server) servePatch(w http.ResponseWriter, r *http.Request, req requestInfo) {
	enc, err := s.negotiateResource(r, req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	mt := mediaTypeOf(r)
	if mt == patch.MediaApply {
		s.serveApply(w, r, req, enc)
		return
	}
	body, err := readBody(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	apply, err := patch.Decode(mt, body, !req.res.unstructured, s.opts.MaxBodyBytes)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	patched, err := s.write(func(st *store) (runtime.Object, error) {
		stored, err := st.get(req.res, req.namespace, req.name)
		if err != nil {
			return nil, err
		}
		obj, err := s.applyPatch(req, stored, apply)
		if err != nil {
			return nil, err
		}
		return st.updateSubresource(req, obj)
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeObject(w, r, enc, http.StatusOK, patched)
}

// applyPatch returns a new object: stored with the patch applied, decoded
// as the resource's type and checked against the URL.
func (s *Server) applyPatch(req requestInfo, stored runtime.Object, apply patch.Func) (runtime.Object, error) {
	if req.view != nil {
		// A patch is written against the version the client speaks.
		shown, err := req.shown(stored)
		if err != nil {
			return nil, err
		}
		patched, err := s.applyPatch(req.asView(), shown, apply)
		if err != nil {
			return nil, err
		}
		return req.stored(patched)
	}
	original, err := json.Marshal(stored)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	schemaObj, err := s.newObject(req.res)
	if err != nil {
		return nil, err
	}
	patched, err := apply(original, schemaObj)
	if err != nil {
		return nil, err
	}
	return s.decodePatched(req, patched)
}

// decodePatched decodes a patched JSON document as the resource's kind.
func (s *Server) decodePatched(req requestInfo, patched []byte) (runtime.Object, error) {
	if req.res.unstructured {
		obj, err := decodeUnstructuredPatched(req.res, patched)
		if err != nil {
			return nil, err
		}
		return obj, checkIdentity(obj, req)
	}
	into, err := s.newObject(req.res)
	if err != nil {
		return nil, err
	}
	info, _ := runtime.SerializerInfoForMediaType(s.codecs.SupportedMediaTypes(), mediaJSON)
	obj, gvk, err := info.Serializer.Decode(patched, &req.res.Kind, into)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the patched object is not a valid %s: %v", req.res.Kind.Kind, err))
	}
	if *gvk != req.res.Kind {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the patch may not change the kind to %s", gvk))
	}
	if err := s.checkFields(req, patched, mediaJSON, patched); err != nil {
		return nil, err
	}
	dropRoundTrip(obj)
	return obj, checkIdentity(obj, req)
}

// mediaTypeOf is the request's Content-Type without parameters.
func mediaTypeOf(r *http.Request) string {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return mt
}
