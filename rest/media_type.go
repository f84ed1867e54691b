package rest

import (
	"bytes"
	"fmt"
	"mime"
)

// The API server picks the response encoding from the request's Accept
// header and names it in the response's Content-Type. We state preferences
// in Accept and then always decode by Content-Type: a server is allowed to
// ignore our preference (custom resources have no protobuf form, so the
// server answers JSON even when we asked for protobuf first).

// ResponseMediaType maps a response Content-Type to ContentTypeJSON or
// ContentTypeProtobuf, the two encodings this module decodes; any other
// gives an error wrapping ErrUnsupportedMediaType. A missing header is
// sniffed from body's first bytes (the protobuf magic, else JSON), because
// some test servers omit it.
func ResponseMediaType(header string, body []byte) (string, error) {
	if header == "" {
		if bytes.HasPrefix(body, protobufMagic) {
			return ContentTypeProtobuf, nil
		}
		return ContentTypeJSON, nil
	}
	mt, _, err := mime.ParseMediaType(header)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v", ErrUnsupportedMediaType, header, err)
	}
	switch mt {
	case ContentTypeJSON:
		return ContentTypeJSON, nil
	case ContentTypeProtobuf:
		return ContentTypeProtobuf, nil
	}
	return "", fmt.Errorf("%w: %q", ErrUnsupportedMediaType, header)
}

// protobufMagic prefixes every enveloped Kubernetes protobuf object.
var protobufMagic = []byte("k8s\x00")
