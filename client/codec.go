package client

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/rest"
)

// encode serialises obj as gvk's version of its kind, in protobuf when the
// config asks for it and the type has a protobuf form, else JSON. It
// returns the body and its Content-Type. An unstructured object is sent as
// it is, and must be of kind gvk.
func (c *Client) encode(obj runtime.Object, gvk schema.GroupVersionKind, protobuf bool) ([]byte, string, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return encodeUnstructured(u, gvk)
	}
	gv := gvk.GroupVersion()
	mediaType := rest.ContentTypeJSON
	if protobuf && c.cfg.ContentType == rest.ContentTypeProtobuf {
		mediaType = rest.ContentTypeProtobuf
	}
	info, ok := runtime.SerializerInfoForMediaType(c.codecs.SupportedMediaTypes(), mediaType)
	if !ok {
		return nil, "", fmt.Errorf("client: no serializer for %s", mediaType)
	}
	data, err := runtime.Encode(c.codecs.EncoderForVersion(info.Serializer, gv), obj)
	if err != nil {
		return nil, "", fmt.Errorf("client: encoding %T: %w", obj, err)
	}
	return data, mediaType, nil
}

// decode reads a response body into into, by its Content-Type. Only JSON
// and Kubernetes protobuf are accepted; a body of another kind than into is
// an error, never a half-filled object.
func (c *Client) decode(contentType string, data []byte, into runtime.Object, res informer.Resource) error {
	mediaType, err := rest.ResponseMediaType(contentType, data)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrMalformedResponse, err)
	}
	switch u := into.(type) {
	case *unstructured.Unstructured:
		return decodeUnstructured(mediaType, data, u, res.Kind)
	case *unstructured.UnstructuredList:
		return decodeUnstructured(mediaType, data, u, listKindOf(res.Kind))
	}
	info, ok := runtime.SerializerInfoForMediaType(c.codecs.SupportedMediaTypes(), mediaType)
	if !ok {
		return fmt.Errorf("%w: no serializer for %s", ErrMalformedResponse, mediaType)
	}
	want, err := c.kindOf(into)
	if err != nil {
		return err
	}
	_, got, err := info.Serializer.Decode(data, nil, into)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrMalformedResponse, err)
	}
	if got == nil || got.Kind != want.Kind {
		return fmt.Errorf("%w: the body is a %v, want a %s", ErrMalformedResponse, got, want.Kind)
	}
	// The typed decoders clear apiVersion and kind; set them again, as
	// reflector/wire does for what it decodes.
	into.GetObjectKind().SetGroupVersionKind(want)
	return nil
}

func (c *Client) kindOf(obj runtime.Object) (schema.GroupVersionKind, error) {
	gvks, _, err := c.scheme.ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		return schema.GroupVersionKind{}, fmt.Errorf("client: %T: %w", obj, ErrUnknownType)
	}
	return gvks[0], nil
}

// unstructuredObject is *unstructured.Unstructured or
// *unstructured.UnstructuredList: a JSON body decodes into either with
// apimachinery's unstructured decoding, integers kept as int64.
type unstructuredObject interface {
	runtime.Object
	UnmarshalJSON([]byte) error
}

// decodeUnstructured reads a JSON body into u, which must then be of kind
// want: the requests of an UnstructuredResource ask for JSON only.
func decodeUnstructured(mediaType string, data []byte, u unstructuredObject, want schema.GroupVersionKind) error {
	if mediaType != rest.ContentTypeJSON {
		return fmt.Errorf("%w: an unstructured answer in %s", ErrMalformedResponse, mediaType)
	}
	if err := u.UnmarshalJSON(data); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformedResponse, err)
	}
	if got := u.GetObjectKind().GroupVersionKind(); got != want {
		return fmt.Errorf("%w: the body is a %v, want a %v", ErrMalformedResponse, got, want)
	}
	return nil
}

// encodeUnstructured is encode for an unstructured object: JSON, as it
// is, and refused unless it says it is of kind want.
func encodeUnstructured(u *unstructured.Unstructured, want schema.GroupVersionKind) ([]byte, string, error) {
	if got := u.GroupVersionKind(); got != want {
		return nil, "", fmt.Errorf("client: a %v sent to the %v resource: %w", got, want, ErrInvalidObject)
	}
	data, err := u.MarshalJSON()
	if err != nil {
		return nil, "", fmt.Errorf("client: encoding %s: %w", want.Kind, err)
	}
	return data, rest.ContentTypeJSON, nil
}

func listKindOf(kind schema.GroupVersionKind) schema.GroupVersionKind {
	return kind.GroupVersion().WithKind(kind.Kind + "List")
}
