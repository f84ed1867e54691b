package wire

// Unstructured mode (Options.Unstructured): a resource decoded into
// *unstructured.Unstructured, for kinds no Go type is registered for, such
// as the custom resources of a CRD created at run time. Everything else
// (requests, frames, limits, errors, the kind checks) is the typed path's;
// only the bodies are read differently, by unstructured_json.go.

import (
	"encoding/json"
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer/rest"
)

// newUnstructuredTarget decodes gvk's objects, whatever the scheme knows,
// into *unstructured.Unstructured, and its lists into
// *unstructured.UnstructuredList. They have no protobuf form: the server
// is asked for JSON (or CBOR). With shareValues, decoded objects share
// their equal small maps and slices (Options.ShareValues).
func newUnstructuredTarget(gvk schema.GroupVersionKind, shareValues bool) *target {
	return &target{
		shareValues:    shareValues,
		itemGVK:        gvk,
		listGVK:        gvk.GroupVersion().WithKind(gvk.Kind + "List"),
		itemType:       reflect.TypeFor[unstructured.Unstructured](),
		listType:       reflect.TypeFor[unstructured.UnstructuredList](),
		itemAPIVersion: gvk.GroupVersion().String(),
	}
}

// isUnstructured reports whether t decodes into unstructured objects.
func (t *target) isUnstructured() bool {
	return t.itemType == reflect.TypeFor[unstructured.Unstructured]()
}

// decodeListBody decodes a list response body into list, as decodeObject
// does, and an unstructured list in one pass of its own (JSON) or with
// apimachinery's CBOR decoding. Only an unstructured list is decoded from
// CBOR.
func (t *target) decodeListBody(mediaType string, body []byte, list runtime.Object) (apiVersion, kind string, err error) {
	ul, ok := list.(*unstructured.UnstructuredList)
	switch {
	case ok && mediaType == rest.ContentTypeCBOR:
		return decodeUnstructuredListCBOR(body, ul) // unstructured_cbor.go
	case mediaType == rest.ContentTypeCBOR:
		return "", "", fmt.Errorf("%w: a %T in CBOR", rest.ErrUnsupportedMediaType, list)
	case !ok:
		return decodeObject(mediaType, body, list)
	case mediaType != rest.ContentTypeJSON:
		return "", "", fmt.Errorf("%w: an unstructured list in %s", rest.ErrUnsupportedMediaType, mediaType)
	}
	var strs stringTable // shared by the items of this page
	var values *valueTable
	if t.shareValues {
		values = &valueTable{}
	}
	apiVersion, kind, err = decodeUnstructuredListJSON(body, ul, &strs, values)
	if err != nil {
		return "", "", fmt.Errorf("%w: JSON: %w", ErrMalformedObject, err)
	}
	return apiVersion, kind, nil
}

// decodeObjectValue decodes the value under a JSON event's "object" key
// into a fresh object of the Go type for typ. An unstructured object's
// bytes are first taken whole (the json.Decoder checks their syntax and
// the frame limit), then decoded in one pass, sharing the strings that
// repeat along the stream.
//
// A pod, when d.parts is set, is taken whole too, and decoded through it
// (json_parts.go).
func (d *jsonEventDecoder) decodeObjectValue(typ watch.EventType) (runtime.Object, error) {
	obj := d.t.newForEvent(typ)
	if p, ok := obj.(*corev1.Pod); ok && d.parts != nil {
		return p, d.decodePod(p)
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, d.dec.Decode(d.t.jsonSkip.jsonInto(obj))
	}
	if err := d.readObject(); err != nil {
		return nil, err
	}
	var values *valueTable
	if d.t.shareValues {
		values = &d.values
	}
	if err := decodeUnstructuredJSON(d.raw, u, &d.strs, values); err != nil {
		return nil, err
	}
	return u, nil
}

// readObject reads the value under a JSON event's "object" key into
// d.raw (the json.Decoder checks its syntax and the frame limit).
func (d *jsonEventDecoder) readObject() error {
	if cap(d.raw) > retainedFrameBuffer {
		d.raw = nil // a rare huge object should not pin its memory
	}
	return d.dec.Decode(&d.raw)
}

// unstructuredState is what a JSON event decoder keeps for unstructured
// objects from one frame to the next.
type unstructuredState struct {
	raw    json.RawMessage // the last object's bytes, when taken whole; reused
	strs   stringTable
	values valueTable // used when the target shares values
}
