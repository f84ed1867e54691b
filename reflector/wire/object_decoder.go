package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/seed31a95821/informer/internal/share"
	"github.com/seed31a95821/informer/rest"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// protoUnmarshaler is implemented by every generated Kubernetes API type.
// Its presence is how we tell built-in types (which the server can send as
// protobuf) from types that only have a JSON form.
type protoUnmarshaler interface {
	Unmarshal(data []byte) error
}

var (
	statusGVK       = metav1.SchemeGroupVersion.WithKind("Status")
	metadataGVK     = metav1.SchemeGroupVersion.WithKind("PartialObjectMetadata")
	metadataListGVK = metav1.SchemeGroupVersion.WithKind("PartialObjectMetadataList")
)

// target is what one ListerWatcher decodes into: the item and list kinds
// and the Go types behind them. It is immutable after construction (its
// intern table locks itself) and so safe for concurrent use.
type target struct {
	itemGVK, listGVK   schema.GroupVersionKind
	itemType, listType reflect.Type // the struct types (not pointers)
	itemAPIVersion     string       // itemGVK.GroupVersion().String(), precomputed
	metadataOnly       bool         // decode as PartialObjectMetadata, kind unchecked
	protobuf           bool         // itemType implements protoUnmarshaler
	strings            *share.Table // interns repeated strings (internal/share); nil: none
	parts              PodParts     // Options.PodParts, when ShareParts: where pods' parts are kept
	// dropManagedFields: objects are delivered without managedFields
	// (Options.DropManagedFields); jsonSkip then skips them in JSON
	// (json_managed_fields.go; nil: they are decoded, then dropped).
	dropManagedFields bool
	jsonSkip          *jsonSkip
	shareValues       bool // unstructured objects share equal maps and slices (unstructured.go)
}

// newTarget resolves the Go types for gvr: PartialObjectMetadata(List) in
// metadata-only mode, else kind (found through the scheme when empty) and
// kind+"List".
func newTarget(s *runtime.Scheme, gvk schema.GroupVersionKind, metadataOnly bool) (*target, error) {
	if metadataOnly {
		t := &target{itemGVK: metadataGVK, listGVK: metadataListGVK, metadataOnly: true, protobuf: true}
		t.itemType = reflect.TypeFor[metav1.PartialObjectMetadata]()
		t.listType = reflect.TypeFor[metav1.PartialObjectMetadataList]()
		t.itemAPIVersion = metadataGVK.GroupVersion().String()
		return t, nil
	}
	t := &target{itemGVK: gvk, listGVK: gvk.GroupVersion().WithKind(gvk.Kind + "List")}
	known := s.KnownTypes(gvk.GroupVersion())
	var ok bool
	if t.itemType, ok = known[t.itemGVK.Kind]; !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownKind, t.itemGVK)
	}
	if t.listType, ok = known[t.listGVK.Kind]; !ok {
		return nil, fmt.Errorf("%w: %s (a watchable kind needs a list kind)", ErrUnknownKind, t.listGVK)
	}
	_, t.protobuf = t.newItem().(protoUnmarshaler)
	t.itemAPIVersion = t.itemGVK.GroupVersion().String()
	return t, nil
}

// newItem and newList allocate a fresh, empty object. reflect.New is what
// runtime.Scheme.New does too, minus the map lookup per object.
func (t *target) newItem() runtime.Object {
	return reflect.New(t.itemType).Interface().(runtime.Object)
}

func (t *target) newList() runtime.Object {
	return reflect.New(t.listType).Interface().(runtime.Object)
}

// newForEvent picks the Go type for a watch event's object: ERROR events
// carry a metav1.Status, every other event the watched kind.
func (t *target) newForEvent(typ watch.EventType) runtime.Object {
	if typ == watch.Error {
		return &metav1.Status{}
	}
	return t.newItem()
}

// itemKindOK reports whether a decoded object's apiVersion/kind may be the
// watched kind. An empty kind is accepted: some servers and fakes omit type
// information, and protobuf lists never carry it per item.
func (t *target) itemKindOK(apiVersion, kind string) bool {
	if t.metadataOnly || kind == "" {
		return true
	}
	return kind == t.itemGVK.Kind && (apiVersion == "" || apiVersion == t.itemAPIVersion)
}

// statusKindOK reports whether an ERROR event's object may be a Status. As
// for items, an empty kind is accepted. The apiVersion is not checked: the
// API server writes a Status as "v1", whatever group it serves, and
// apimachinery registers it under meta.k8s.io/v1 too.
func statusKindOK(kind string) bool {
	return kind == "" || kind == statusGVK.Kind
}

// finishEventObject stamps the expected type information on a freshly
// decoded event object, or, when the object turned out to be of another
// kind, replaces it by a *runtime.Unknown naming that kind, so that the
// reflector can report and skip it instead of storing a half-decoded object.
//
// hits are the parts obj shares with other objects (protobuf_parts.go,
// json_parts.go):
// they are not interned again.
func (t *target) finishEventObject(typ watch.EventType, obj runtime.Object, apiVersion, kind string, raw []byte, mediaType string, hits partSet) runtime.Object {
	switch {
	case typ == watch.Error && !statusKindOK(kind):
		return &runtime.Unknown{
			TypeMeta:    runtime.TypeMeta{APIVersion: apiVersion, Kind: kind},
			Raw:         raw,
			ContentType: mediaType,
		}
	case typ == watch.Error:
		if _, ok := obj.(*metav1.Status); ok {
			obj.GetObjectKind().SetGroupVersionKind(statusGVK)
		}
		return obj
	case !t.itemKindOK(apiVersion, kind):
		return &runtime.Unknown{
			TypeMeta:    runtime.TypeMeta{APIVersion: apiVersion, Kind: kind},
			Raw:         raw,
			ContentType: mediaType,
		}
	}
	// Unlike client-go, which strips apiVersion/kind from typed objects,
	// every object we deliver says what it is, whatever the encoding.
	obj.GetObjectKind().SetGroupVersionKind(t.itemGVK)
	t.dropManaged(obj)
	withPartsHidden(obj, hits, t.strings.Strings)
	return obj
}

// dropManaged clears obj's managedFields when the target drops them and
// the decoder did not skip them already.
func (t *target) dropManaged(obj runtime.Object) {
	if !t.dropManagedFields {
		return
	}
	if m, ok := obj.(metav1.Object); ok && m.GetManagedFields() != nil {
		m.SetManagedFields(nil)
	}
}

// decodeList decodes a whole list response body and stamps type
// information on the list and on every item.
func (t *target) decodeList(mediaType string, body []byte) (runtime.Object, error) {
	list, _, err := t.decodeListWith(mediaType, body, nil, nil)
	return list, err
}

// decodeListWith is decodeList with a protobuf decoder (nil: the generated
// Unmarshal alone) and a JSON one for pods' parts (nil: encoding/json
// alone). It also returns the parts each item shares with others
// (protobuf_parts.go, json_parts.go), nil when none does.
func (t *target) decodeListWith(mediaType string, body []byte, pd *protoDecoder, jd *jsonPartsDecoder) (runtime.Object, []partSet, error) {
	list := t.newList()
	var hits []partSet
	var apiVersion, kind string
	var err error
	if t.isUnstructured() || mediaType == rest.ContentTypeCBOR {
		apiVersion, kind, err = t.decodeListBody(mediaType, body, list) // unstructured.go
	} else {
		apiVersion, kind, err = decodeObjectWith(mediaType, body, list, func(raw []byte) (err error) {
			hits, err = pd.decodeList(raw, list)
			return err
		}, func(raw []byte) (err error) {
			if pods, ok := list.(*corev1.PodList); ok && jd != nil {
				hits, err = jd.decodeList(raw, pods)
				return err
			}
			return json.Unmarshal(raw, t.jsonSkip.jsonInto(list))
		})
	}
	if err != nil {
		return nil, nil, err
	}
	if !t.metadataOnly && kind != "" && (kind != t.listGVK.Kind || (apiVersion != "" && apiVersion != t.listGVK.GroupVersion().String())) {
		return nil, nil, fmt.Errorf("%w: got %s %s, want %s", ErrUnexpectedKind, apiVersion, kind, t.listGVK)
	}
	list.GetObjectKind().SetGroupVersionKind(t.listGVK)
	i := 0
	err = meta.EachListItem(list, func(item runtime.Object) error {
		// A JSON item says what it is (a protobuf one never does): one of
		// another kind would otherwise be stamped, and cached, as ours.
		if apiVersion, kind := typeMetaOf(item); !t.itemKindOK(apiVersion, kind) {
			return fmt.Errorf("%w: list item %d is a %s %s, want %s", ErrUnexpectedKind, i, apiVersion, kind, t.itemGVK)
		}
		item.GetObjectKind().SetGroupVersionKind(t.itemGVK)
		t.dropManaged(item)
		withPartsHidden(item, partsOf(hits, i), t.strings.Strings)
		i++
		return nil
	})
	if errors.Is(err, ErrUnexpectedKind) {
		return nil, nil, err
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: walking list items: %w", ErrMalformedObject, err)
	}
	return list, hits, nil
}

// partsOf returns hits[i], or none when hits is nil.
func partsOf(hits []partSet, i int) partSet {
	if i < len(hits) {
		return hits[i]
	}
	return 0
}

// decodeObject decodes one complete object body (JSON, or an enveloped
// protobuf object) into into, and returns the type information the body
// carried.
func decodeObject(mediaType string, body []byte, into runtime.Object) (apiVersion, kind string, err error) {
	return decodeObjectWith(mediaType, body, into, nil, nil)
}

// decodeObjectWith is decodeObject with unmarshal, when not nil, in place
// of into's generated Unmarshal for the object's protobuf bytes, and
// unmarshalJSON, when not nil, in place of encoding/json for its JSON.
func decodeObjectWith(mediaType string, body []byte, into runtime.Object, unmarshal, unmarshalJSON func([]byte) error) (apiVersion, kind string, err error) {
	if mediaType == rest.ContentTypeProtobuf {
		env, err := parseProtoEnvelope(body)
		if err != nil {
			return "", "", fmt.Errorf("%w: protobuf envelope: %w", ErrMalformedObject, err)
		}
		if len(env.contentEncoding) > 0 {
			return "", "", fmt.Errorf("%w: protobuf content encoding %q", rest.ErrUnsupportedMediaType, env.contentEncoding)
		}
		pu, ok := into.(protoUnmarshaler)
		if !ok {
			return "", "", fmt.Errorf("%w: %T has no protobuf form", rest.ErrUnsupportedMediaType, into)
		}
		if unmarshal == nil {
			unmarshal = pu.Unmarshal
		}
		if err := unmarshal(env.raw); err != nil {
			return "", "", fmt.Errorf("%w: protobuf %s: %w", ErrMalformedObject, env.kind, err)
		}
		return string(env.apiVersion), string(env.kind), nil
	}
	if unmarshalJSON == nil {
		unmarshalJSON = func(raw []byte) error { return json.Unmarshal(raw, into) }
	}
	if err := unmarshalJSON(body); err != nil {
		return "", "", fmt.Errorf("%w: JSON: %w", ErrMalformedObject, err)
	}
	apiVersion, kind = typeMetaOf(into)
	return apiVersion, kind, nil
}

// typeMetaOf returns the apiVersion and kind an object decoded from JSON
// claims to be. Generated types embed metav1.TypeMeta, which is its own
// ObjectKind, so the common case reads two fields without allocating.
func typeMetaOf(obj runtime.Object) (apiVersion, kind string) {
	if tm, ok := obj.GetObjectKind().(*metav1.TypeMeta); ok {
		return tm.APIVersion, tm.Kind
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	return gvk.GroupVersion().String(), gvk.Kind
}
