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

// ResponseMediaType maps a response Content-Type to ContentTypeJSON,
// ContentTypeProtobuf or ContentTypeCBOR (for application/cbor and a watch's
// application/cbor-seq), the encodings this module decodes; any other
// gives an error wrapping ErrUnsupportedMediaType. A missing header is
// sniffed from body's first bytes (the protobuf magic, CBOR's
// self-described tag, else JSON), because some test servers omit it.
// Where a caller decodes CBOR is its own affair: one that does not must
// refuse it (it only comes when asked for).
func ResponseMediaType(header string, body []byte) (string, error) {
	if header == "" {
		switch {
		case bytes.HasPrefix(body, protobufMagic):
			return ContentTypeProtobuf, nil
		case bytes.HasPrefix(body, cborSelfDescribed):
			return ContentTypeCBOR, nil
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
	case ContentTypeCBOR, contentTypeCBORSequence:
		return ContentTypeCBOR, nil
	}
	return "", fmt.Errorf("%w: %q", ErrUnsupportedMediaType, header)
}

// protobufMagic prefixes every enveloped Kubernetes protobuf object.
var protobufMagic = []byte("k8s\x00")

// cborSelfDescribed is the head of CBOR tag 55799, which the API server
// puts around every CBOR object: a magic number with no other meaning.
var cborSelfDescribed = []byte{0xd9, 0xd9, 0xf7}

// contentTypeCBORSequence is the Content-Type of a CBOR watch stream: CBOR
// objects back to back (RFC 8742).
const contentTypeCBORSequence = "application/cbor-seq"
