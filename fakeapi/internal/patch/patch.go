package patch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
//   - Apply patch: server-side apply (fakeapi/internal/apply).
const (
	MediaMerge          = "application/merge-patch+json"
	MediaStrategicMerge = "application/strategic-merge-patch+json"
	MediaJSONPatch      = "application/json-patch+json"
	// MediaApply is server-side apply's, which fakeapi/internal/apply decodes.
	MediaApply = "application/apply-patch+yaml"
)

// Bounds on hostile patches, beyond the body limit every request has.
const (
	// maxJSONPatchOperations is the real server's limit (413 above it).
	maxJSONPatchOperations = 10000
	// maxJSONPatchCopies bounds the copy operations of one JSON patch: each
	// can double the document, and each costs a pass over it. Real clients
	// (kubectl, client-go) never send one.
	maxJSONPatchCopies = 64
	// MaxDepth bounds how deeply a patch may nest objects and arrays,
	// so that no recursive merge can exhaust the stack; real objects nest
	// a few dozen levels at most.
	MaxDepth = 100
)

// Func applies a decoded patch to the JSON of the stored object, given an
// empty object of the resource's Go type (the schema of a strategic merge),
// and returns the patched JSON. Its errors are *apierrors.StatusError: 422
// for a patch that does not apply, 413 for a result over the limit.
type Func func(original []byte, schema runtime.Object) ([]byte, error)

// Decode checks a patch of the given media type (which the caller reads
// from the request's Content-Type) and returns how to apply it. It runs
// outside the server's lock: only the returned Func runs inside. typed says
// whether the resource has a Go type, which a strategic merge patch needs
// for its schema (a custom resource has none: 415, as on the real server);
// limit bounds the patched document, in bytes. Errors are the real
// server's *apierrors.StatusError: 400 for a malformed patch, 413 for one
// too large, 415 for an unknown or unsupported media type.
func Decode(mediaType string, patch []byte, typed bool, limit int64) (Func, error) {
	if err := CheckDepth(patch); err != nil {
		return nil, err
	}
	switch mediaType {
	case MediaMerge:
		return decodeMergePatch(patch)
	case MediaStrategicMerge:
		if !typed {
			return nil, Unsupported("")
		}
		return decodeStrategicMergePatch(patch)
	case MediaJSONPatch:
		return decodeJSONPatch(patch, limit)
	}
	return nil, Unsupported("")
}

func decodeMergePatch(patch []byte) (Func, error) {
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

func decodeStrategicMergePatch(patch []byte) (Func, error) {
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
func decodeJSONPatch(patch []byte, limit int64) (Func, error) {
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

// CheckDepth refuses (400) a document that nests objects and arrays deeper
// than MaxDepth, with one pass over its bytes (brackets inside strings do
// not count). It checks nothing else: the decoders that follow do.
func CheckDepth(data []byte) error {
	const max = MaxDepth
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

// Unsupported is the real server's 415 for a patch type the resource does
// not take; why, when set, replaces its terse message.
func Unsupported(why string) *apierrors.StatusError {
	msg := "415: Unsupported Media Type"
	if why != "" {
		msg = why
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType,
		Reason: metav1.StatusReasonUnsupportedMediaType, Message: msg,
	}}
}
