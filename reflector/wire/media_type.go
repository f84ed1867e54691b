package wire

import (
	"strings"

	"github.com/seed31a95821/informer/rest"
)

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
		joined := rest.AcceptHeader(contentType, protobuf)
		return joined, joined
	}
	types := strings.Split(rest.AcceptHeader(contentType, protobuf), ", ")
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
	l, w = append(l, rest.ContentTypeJSON), append(w, rest.ContentTypeJSON)
	return strings.Join(l, ", "), strings.Join(w, ", ")
}
