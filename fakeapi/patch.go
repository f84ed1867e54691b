package fakeapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
)

// servePatch answers PATCH with a JSON merge patch (RFC 7386), the patch
// type every client and kubectl can send for any resource. Strategic merge
// and JSON patch are not implemented and get 415.
//
// The patch is applied inside the store's critical section, so it always
// applies to the latest state; a resourceVersion inside the patch acts as
// a precondition, exactly as in an update.
func (s *Server) servePatch(w http.ResponseWriter, r *http.Request, req requestInfo) {
	enc, err := s.negotiate(r, req.res.protobuf)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != mediaMerge {
		s.writeError(w, r, unsupportedPatch(r.Header.Get("Content-Type")))
		return
	}
	patch, err := readBody(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var patchDoc any
	if err := decodeJSONNumbers(patch, &patchDoc); err != nil {
		s.writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("the patch is not valid JSON: %v", err)))
		return
	}
	if _, isObject := patchDoc.(map[string]any); !isObject {
		s.writeError(w, r, apierrors.NewBadRequest("a merge patch must be a JSON object"))
		return
	}
	patched, err := s.write(func(st *store) (runtime.Object, error) {
		stored, err := st.get(req.res, req.namespace, req.name)
		if err != nil {
			return nil, err
		}
		obj, err := s.applyMergePatch(req, stored, patchDoc)
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

// applyMergePatch returns a new object: stored with the patch merged in.
func (s *Server) applyMergePatch(req requestInfo, stored runtime.Object, patchDoc any) (runtime.Object, error) {
	original, err := json.Marshal(stored)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	var doc any
	if err := decodeJSONNumbers(original, &doc); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	merged, err := json.Marshal(mergePatch(doc, patchDoc))
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	info, _ := runtime.SerializerInfoForMediaType(s.codecs.SupportedMediaTypes(), mediaJSON)
	into, err := s.opts.Scheme.New(req.res.Kind)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	obj, gvk, err := info.Serializer.Decode(merged, &req.res.Kind, into)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the patched object is not a valid %s: %v", req.res.Kind.Kind, err))
	}
	if *gvk != req.res.Kind {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the patch may not change the kind to %s", gvk))
	}
	return obj, checkIdentity(obj, req)
}

// mergePatch applies an RFC 7386 merge patch: objects merge key by key,
// null deletes a key, anything else replaces the target value.
func mergePatch(target, patch any) any {
	patchObj, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	targetObj, ok := target.(map[string]any)
	if !ok {
		targetObj = map[string]any{}
	}
	for key, value := range patchObj {
		if value == nil {
			delete(targetObj, key)
			continue
		}
		targetObj[key] = mergePatch(targetObj[key], value)
	}
	return targetObj
}

// decodeJSONNumbers decodes JSON keeping numbers exact (as json.Number), so
// that large integers survive the round trip through any.
func decodeJSONNumbers(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("unexpected data after the JSON value")
	}
	return nil
}

func unsupportedPatch(contentType string) *apierrors.StatusError {
	err := unsupportedMediaType(contentType)
	err.ErrStatus.Message = fmt.Sprintf("the server does not support patch type %q; use %s", contentType, mediaMerge)
	return err
}
