package fakeapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"

	"github.com/seed31a95821/informer/fakeapi/internal/table"
)

// Media types the server speaks.
const (
	mediaJSON     = runtime.ContentTypeJSON
	mediaYAML     = runtime.ContentTypeYAML
	mediaProtobuf = runtime.ContentTypeProtobuf
	mediaCBOR     = runtime.ContentTypeCBOR
)

// newCodecs is the server's serializers: JSON, YAML and protobuf, and CBOR
// when Options.CBOR.
func newCodecs(opts Options) serializer.CodecFactory {
	if opts.CBOR {
		return serializer.NewCodecFactory(opts.Scheme, serializer.WithSerializer(cbor.NewSerializerInfo))
	}
	return serializer.NewCodecFactory(opts.Scheme)
}

// Response shapes a client may ask for with the "as" media-type parameter
// (and asTable, the Table of kubectl get: fakeapi/internal/table).
// Metadata-only informers ask for PartialObjectMetadata(List) so the
// server strips everything but metadata.
const (
	asFull            = ""
	asPartial         = "PartialObjectMetadata"
	asPartialList     = "PartialObjectMetadataList"
	partialGroup      = "meta.k8s.io"
	partialAPIVersion = "meta.k8s.io/v1"
	asTable           = table.As
)

// encoding is the outcome of content negotiation for one response.
type encoding struct {
	// mediaType is the Content-Type of the response.
	mediaType string
	info      runtime.SerializerInfo
	// as is asFull, one of the partial-metadata shapes, or asTable.
	as string
	// table converts to Tables when as is asTable.
	table *table.Converter
	// show, for a request on a view, converts stored objects (and lists)
	// to it before they are shaped (views.go); Tables are built from the
	// stored objects. view names the view, for the shared watch frames.
	show func(runtime.Object) (runtime.Object, error)
	view *resourceInfo
}

// acceptCandidate is one media range of an Accept header.
type acceptCandidate struct {
	mediaType string
	params    map[string]string
	q         float64
}

// negotiate picks the response encoding from the Accept header, as the real
// server does: the first acceptable media range in preference order wins,
// and a header with none acceptable gets 406. protobufOK is false for types
// that have no protobuf form.
func (s *Server) negotiate(r *http.Request, protobufOK bool) (encoding, error) {
	header := r.Header.Get("Accept")
	if strings.TrimSpace(header) == "" {
		return s.encodingFor(mediaJSON, asFull), nil
	}
	for _, c := range parseAccept(header) {
		if enc, ok := s.acceptable(c, protobufOK); ok {
			return enc, nil
		}
	}
	return encoding{}, notAcceptable()
}

func (s *Server) acceptable(c acceptCandidate, protobufOK bool) (encoding, bool) {
	as, ok := acceptedShape(c.params)
	if !ok {
		return encoding{}, false
	}
	switch c.mediaType {
	case "*/*", "application/*", mediaJSON:
		return s.encodingFor(mediaJSON, as), true
	case mediaYAML:
		return s.encodingFor(mediaYAML, as), true
	case mediaCBOR:
		if s.opts.CBOR && as == asFull {
			return s.encodingFor(mediaCBOR, as), true
		}
	case mediaProtobuf:
		if as == asTable {
			break // Tables are served as JSON or YAML only
		}
		if protobufOK || as != asFull {
			return s.encodingFor(mediaProtobuf, as), true
		}
	}
	return encoding{}, false
}

// acceptedShape reads the as/g/v parameters: the partial-metadata shapes
// and Table of meta.k8s.io/v1 are served; a client asking for another
// (meta.k8s.io/v1beta1) falls back to its next media range.
func acceptedShape(params map[string]string) (string, bool) {
	as, g, v := params["as"], params["g"], params["v"]
	if as == "" && g == "" && v == "" {
		return asFull, true
	}
	if (as == asPartial || as == asPartialList || as == asTable) && g == partialGroup && v == "v1" {
		return as, true
	}
	return "", false
}

// negotiateResource is negotiate for a request on a resource: a Table
// answer gets the resource's columns.
func (s *Server) negotiateResource(r *http.Request, req requestInfo) (encoding, error) {
	enc, err := s.negotiate(r, req.res.protobuf)
	if err == nil && enc.as == asTable {
		enc.table, err = table.NewConverter(s.columnsFor(req.res), r.URL.Query().Get("includeObject"), s.opts.Now)
	}
	if err == nil && req.view != nil && enc.as != asTable {
		enc.show, enc.view = s.showThrough(req.view), req.view
	}
	return enc, err
}

// columnsFor picks the kind's Table columns: its own (custom resources with
// additionalPrinterColumns), else the built-in printer or the default.
func (s *Server) columnsFor(ri *resourceInfo) table.Columns {
	if ri.printerColumns != nil {
		return *ri.printerColumns
	}
	return table.For(ri.Kind.GroupKind())
}

func (s *Server) encodingFor(mediaType, as string) encoding {
	info, _ := runtime.SerializerInfoForMediaType(s.codecs.SupportedMediaTypes(), mediaType)
	return encoding{mediaType: mediaType, info: info, as: as}
}

// parseAccept splits an Accept header into media ranges, most preferred
// first. Unparseable ranges and q=0 are skipped.
func parseAccept(header string) []acceptCandidate {
	var out []acceptCandidate
	for _, part := range strings.Split(header, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if qs, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(qs, 64); err == nil {
				q = f
			}
		}
		if q <= 0 {
			continue
		}
		out = append(out, acceptCandidate{mediaType: mt, params: params, q: q})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].q > out[j].q })
	return out
}

// notAcceptable is the real server's 406, with its message and its empty
// details object.
func notAcceptable() *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusNotAcceptable, Reason: metav1.StatusReasonNotAcceptable,
		Message: "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, " +
			"application/vnd.kubernetes.protobuf, application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch",
		Details: &metav1.StatusDetails{},
	}}
}

// notAcceptableStream answers a watch whose negotiated media type cannot
// be streamed, naming the stream media types as the real server does.
func notAcceptableStream() *apierrors.StatusError {
	return notAcceptableBecause("only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch")
}

// notAcceptableBecause is the real server's 406 for a particular refusal,
// such as an "as" shape that does not fit the answer (PartialObjectMetadata
// for a list, or PartialObjectMetadataList for one object), for which it
// does not fall back to the client's next media range either. Unlike
// notAcceptable's, this Status has no details at all: kube-apiserver builds
// it from its own error type, which sets none, so the body has no
// "details" key (TestNotAcceptableShapes).
func notAcceptableBecause(message string) *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusNotAcceptable, Reason: metav1.StatusReasonNotAcceptable,
		Message: message,
	}}
}

func unsupportedMediaType(got string) *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
		Message: fmt.Sprintf("the body of the request was in an unknown format %q - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf", got),
	}}
}

// shape converts a stored object (or a list) to the negotiated shape.
func shape(obj runtime.Object, as string) (runtime.Object, error) {
	switch as {
	case asPartial:
		if meta.IsListType(obj) {
			return nil, notAcceptableBecause(fmt.Sprintf("you requested PartialObjectMetadata, but the requested object is a list (%T)", obj))
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		p := meta.AsPartialObjectMetadata(m)
		p.APIVersion, p.Kind = partialAPIVersion, asPartial
		return p, nil
	case asPartialList:
		return partialList(obj)
	}
	return obj, nil
}

func partialList(list runtime.Object) (runtime.Object, error) {
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return nil, notAcceptableBecause(fmt.Sprintf("you requested PartialObjectMetadataList, but the requested object is not a list (%T)", list))
	}
	out := &metav1.PartialObjectMetadataList{
		TypeMeta: metav1.TypeMeta{APIVersion: partialAPIVersion, Kind: asPartialList},
		ListMeta: metav1.ListMeta{ResourceVersion: lm.GetResourceVersion(), Continue: lm.GetContinue(),
			RemainingItemCount: lm.GetRemainingItemCount()},
	}
	err = meta.EachListItem(list, func(item runtime.Object) error {
		p, err := shape(item, asPartial)
		if err == nil {
			out.Items = append(out.Items, *p.(*metav1.PartialObjectMetadata))
		}
		return err
	})
	return out, err
}

// encode renders obj with the negotiated serializer.
func (enc encoding) encode(obj runtime.Object, w io.Writer) error { return enc.encodeWith(obj, w, nil) }

// encodeWith is encode with the serializer's working buffer taken from
// alloc (nil: its own), when the serializer can (protobuf's can; JSON's
// has none).
func (enc encoding) encodeWith(obj runtime.Object, w io.Writer, alloc runtime.MemoryAllocator) error {
	if enc.as == asTable {
		tc := enc.table
		if tc == nil {
			tc, _ = table.NewConverter(table.For(schema.GroupKind{}), "", time.Now)
		}
		shaped, err := tc.Convert(obj)
		if err != nil {
			return err
		}
		return enc.info.Serializer.Encode(shaped, w)
	}
	if enc.show != nil {
		shown, err := enc.show(obj)
		if err != nil {
			return err
		}
		obj = shown
	}
	shaped, err := shape(obj, enc.as)
	if err != nil {
		return err
	}
	if ea, ok := enc.info.Serializer.(runtime.EncoderWithAllocator); ok && alloc != nil {
		return ea.EncodeWithAllocator(shaped, w, alloc)
	}
	return enc.info.Serializer.Encode(shaped, w)
}

// writeObject sends obj with the given status code. It encodes into a buffer
// first so that an encoding failure can still become a clean 500 Status.
func (s *Server) writeObject(w http.ResponseWriter, r *http.Request, enc encoding, code int, obj runtime.Object) {
	var buf bytes.Buffer
	if err := enc.encode(obj, &buf); err != nil {
		var api apierrors.APIStatus
		if !errors.As(err, &api) {
			err = apierrors.NewInternalError(fmt.Errorf("encoding response: %w", err))
		}
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", enc.mediaType)
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// writeError sends err as a metav1.Status, in the client's preferred
// encoding when it has one. Errors that are not API errors become 500.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, errNoRoute) {
		notFoundText(w)
		return
	}
	status := toStatus(err)
	enc, nerr := s.negotiate(r, true)
	if nerr != nil || enc.as != asFull {
		enc = s.encodingFor(mediaJSON, asFull)
	}
	if status.Details != nil && status.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(status.Details.RetryAfterSeconds)))
	}
	var buf bytes.Buffer
	if err := enc.info.Serializer.Encode(status, &buf); err != nil {
		http.Error(w, status.Message, int(status.Code))
		return
	}
	w.Header().Set("Content-Type", enc.mediaType)
	w.WriteHeader(int(status.Code))
	_, _ = w.Write(buf.Bytes())
}

// toStatus turns any error into the Status object sent on the wire.
func toStatus(err error) *metav1.Status {
	var status metav1.Status
	var api apierrors.APIStatus
	if errors.As(err, &api) {
		status = api.Status()
	} else {
		status = apierrors.NewInternalError(err).ErrStatus
	}
	status.APIVersion, status.Kind = "v1", "Status"
	if status.Status == "" {
		status.Status = metav1.StatusFailure
	}
	return &status
}
