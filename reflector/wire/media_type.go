package wire

import (
	"bytes"
	"fmt"
	"mime"
	"strings"
)

// The API server picks the response encoding from the request's Accept
// header and names it in the response's Content-Type. We state preferences
// in Accept and then always decode by Content-Type: a server is allowed to
// ignore our preference (custom resources have no protobuf form, so the
// server answers JSON even when we asked for protobuf first).

// Parameters that ask the server to convert each object into
// PartialObjectMetadata (metadata only) before encoding it: a much smaller
// response for controllers that only need names, labels and owners.
const (
	asMetadataList = ";as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
	asMetadata     = ";as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
)

// acceptHeaders returns the Accept headers for list and for watch requests.
// protobuf reports whether the target Go type can be decoded from protobuf.
func acceptHeaders(contentType string, protobuf, metadataOnly bool) (list, watch string) {
	if !metadataOnly {
		joined := AcceptHeader(contentType, protobuf)
		return joined, joined
	}
	types := acceptedTypes(contentType, protobuf)
	// Ask for the metadata form of every acceptable type, then fall back to
	// plain JSON: a server that cannot convert answers with full objects,
	// and full objects still decode into PartialObjectMetadata because every
	// Kubernetes object keeps its metadata under the same JSON key and the
	// same protobuf field number (1).
	var l, w []string
	for _, t := range types {
		l = append(l, t+asMetadataList)
		w = append(w, t+asMetadata)
	}
	l, w = append(l, ContentTypeJSON), append(w, ContentTypeJSON)
	return strings.Join(l, ", "), strings.Join(w, ", ")
}

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
