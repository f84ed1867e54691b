package client

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/rest"
)

// encode serialises obj as gv's version of its kind, in protobuf when the
// config asks for it and the type has a protobuf form, else JSON. It
// returns the body and its Content-Type.
func (c *Client) encode(obj runtime.Object, gv schema.GroupVersion, protobuf bool) ([]byte, string, error) {
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
	if u, ok := into.(*unstructured.Unstructured); ok {
		return decodeUnstructured(mediaType, data, u, res.Kind)
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

// decodeUnstructured reads a JSON body into u, which must then be of kind
// want: the requests of an UnstructuredResource ask for JSON only.
func decodeUnstructured(mediaType string, data []byte, u *unstructured.Unstructured, want schema.GroupVersionKind) error {
	if mediaType != rest.ContentTypeJSON {
		return fmt.Errorf("%w: an unstructured answer in %s", ErrMalformedResponse, mediaType)
	}
	if err := u.UnmarshalJSON(data); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformedResponse, err)
	}
	if got := u.GroupVersionKind(); got != want {
		return fmt.Errorf("%w: the body is a %v, want a %v", ErrMalformedResponse, got, want)
	}
	return nil
}
