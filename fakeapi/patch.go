package fakeapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// The patch types of the real server, named by the request's Content-Type:
//
//   - JSON merge patch (RFC 7386): objects merge key by key, null deletes,
//     anything else (lists included) replaces.
//   - Strategic merge patch: a merge patch that knows, from the Go type's
//     struct tags (patchStrategy, patchMergeKey), which lists merge by a key
//     (containers by name) instead of being replaced. kubectl apply, patch
//     and set image send it for built-in types.
//   - JSON patch (RFC 6902): a list of add/remove/replace/move/copy/test
//     operations on JSON pointers.
//   - Apply patch: server-side apply (apply.go).
//
// Every patch is applied inside the store's critical section, so it always
// applies to the latest state; a resourceVersion inside the patch acts as a
// precondition, exactly as in an update.
const (
	mediaMerge          = "application/merge-patch+json"
	mediaStrategicMerge = "application/strategic-merge-patch+json"
	mediaJSONPatch      = "application/json-patch+json"
	mediaApply          = "application/apply-patch+yaml"
)

// Bounds on hostile patches, beyond the body limit every request has.
const (
	// maxJSONPatchOperations is the real server's limit (413 above it).
	maxJSONPatchOperations = 10000
	// maxJSONPatchCopies bounds the copy operations of one JSON patch: each
	// can double the document, and each costs a pass over it. Real clients
	// (kubectl, client-go) never send one.
	maxJSONPatchCopies = 64
	// maxJSONDepth bounds how deeply a patch may nest objects and arrays,
	// so that no recursive merge can exhaust the stack; real objects nest
	// a few dozen levels at most.
	maxJSONDepth = 100
)

// patchFunc applies a decoded patch to the JSON of the stored object, given
// an empty object of the resource's Go type (the schema of a strategic merge).
type patchFunc func(original []byte, schema runtime.Object) ([]byte, error)

// servePatch answers PATCH with any of the patch types above.
func (s *Server) servePatch(w http.ResponseWriter, r *http.Request, req requestInfo) {
	enc, err := s.negotiateResource(r, req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	mt := mediaTypeOf(r)
	if mt == mediaApply {
		s.serveApply(w, r, req, enc)
		return
	}
	patch, err := readBody(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	apply, err := s.decodePatch(req, mt, patch)
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

// decodePatch checks the patch outside the lock and returns how to apply it.
func (s *Server) decodePatch(req requestInfo, mediaType string, patch []byte) (patchFunc, error) {
	if err := checkJSONDepth(patch, maxJSONDepth); err != nil {
		return nil, err
	}
	switch mediaType {
	case mediaMerge:
		return decodeMergePatch(patch)
	case mediaStrategicMerge:
		if req.res.unstructured {
			return nil, unsupportedPatch(mediaType, "")
		}
		return decodeStrategicMergePatch(patch)
	case mediaJSONPatch:
		return decodeJSONPatch(patch, s.opts.MaxBodyBytes)
	}
	return nil, unsupportedPatch(mediaType, "")
}

func decodeMergePatch(patch []byte) (patchFunc, error) {
	var patchDoc any
	if err := decodeJSONNumbers(patch, &patchDoc); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
	}
	if _, isObject := patchDoc.(map[string]any); !isObject {
		return nil, apierrors.NewBadRequest("a merge patch must be a JSON object")
	}
	return func(original []byte, _ runtime.Object) ([]byte, error) {
		var doc any
		if err := decodeJSONNumbers(original, &doc); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		return json.Marshal(mergePatch(doc, patchDoc))
	}, nil
}

func decodeStrategicMergePatch(patch []byte) (patchFunc, error) {
	var patchDoc map[string]any
	if err := json.Unmarshal(patch, &patchDoc); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
	}
	return func(original []byte, schema runtime.Object) ([]byte, error) {
		out, err := strategicpatch.StrategicMergePatch(original, patch, schema)
		if err != nil {
			return nil, strategicMergeError(err)
		}
		return out, nil
	}, nil
}

// strategicMergeError maps the library's errors to the real server's codes:
// a malformed patch is 400, a patch the schema cannot merge is 422.
func strategicMergeError(err error) error {
	for _, bad := range []error{mergepatch.ErrBadJSONDoc, mergepatch.ErrBadPatchFormatForPrimitiveList,
		mergepatch.ErrBadPatchFormatForRetainKeys, mergepatch.ErrBadPatchFormatForSetElementOrderList,
		mergepatch.ErrUnsupportedStrategicMergePatchFormat} {
		if errors.Is(err, bad) {
			return apierrors.NewBadRequest(err.Error())
		}
	}
	return unprocessable(err)
}

// decodeJSONPatch decodes an RFC 6902 patch. It is applied in segments that
// end at each copy, and the document may not outgrow limit bytes, so that a
// few copies cannot blow a small object up exponentially.
func decodeJSONPatch(patch []byte, limit int64) (patchFunc, error) {
	ops, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if len(ops) > maxJSONPatchOperations {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf(
			"The allowed maximum operations in a JSON patch is %d, got %d", maxJSONPatchOperations, len(ops)))
	}
	var segments []jsonpatch.Patch
	start, copies := 0, 0
	for i, op := range ops {
		if op.Kind() == "copy" {
			copies++
		}
		if op.Kind() == "copy" || i == len(ops)-1 {
			segments = append(segments, ops[start:i+1])
			start = i + 1
		}
	}
	if copies > maxJSONPatchCopies {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf(
			"fakeapi allows at most %d copy operations in a JSON patch", maxJSONPatchCopies))
	}
	return func(doc []byte, _ runtime.Object) ([]byte, error) {
		for _, seg := range segments {
			var err error
			if doc, err = seg.Apply(doc); err != nil {
				return nil, unprocessable(err)
			}
			if int64(len(doc)) > limit {
				return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf(
					"the patched object is larger than %d bytes", limit))
			}
		}
		return doc, nil
	}, nil
}

// applyPatch returns a new object: stored with the patch applied, decoded
// as the resource's type and checked against the URL.
func (s *Server) applyPatch(req requestInfo, stored runtime.Object, apply patchFunc) (runtime.Object, error) {
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
	if err := checkFields(req, s.unknownFields(req, patched, mediaJSON), patched); err != nil {
		return nil, err
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

// checkJSONDepth refuses a document that nests objects and arrays deeper
// than max, with one pass over its bytes (brackets inside strings do not
// count). It checks nothing else: the decoders that follow do.
func checkJSONDepth(data []byte, max int) error {
	depth, inString, escaped := 0, false, false
	for _, c := range data {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			if depth++; depth > max {
				return apierrors.NewBadRequest(fmt.Sprintf("the body nests deeper than %d levels", max))
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}

// unprocessable is the real server's 422 for a patch that cannot be
// applied: a Status with only a message, no reason beyond the code's.
func unprocessable(err error) error {
	return apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
}

// unsupportedPatch is the 415 for a patch type the resource does not take.
func unsupportedPatch(contentType, why string) *apierrors.StatusError {
	err := unsupportedMediaType(contentType)
	err.ErrStatus.Message = "415: Unsupported Media Type"
	if why != "" {
		err.ErrStatus.Message = why
	}
	return err
}

// mediaTypeOf is the request's Content-Type without parameters.
func mediaTypeOf(r *http.Request) string {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return mt
}
