package wire

// CBOR for unstructured objects. kube-apiserver serves CBOR (RFC 8949),
// behind its CBORServingAndStorage feature gate, to a client that asks for
// it; a ListerWatcher of unstructured objects asks when rest.Config's
// ContentType is rest.ContentTypeCBOR, with JSON as the fallback, so a
// server without CBOR answers JSON. The decoding is apimachinery's own
// (runtime/serializer/cbor), which keeps integers as int64 as its JSON
// decoding does. Typed objects are never decoded from CBOR: a typed
// ListerWatcher does not ask for it and refuses it.
//
// A watch stream is a CBOR sequence (application/cbor-seq, RFC 8742):
// each frame is one self-delimiting CBOR data item, a metav1.WatchEvent
// whose object is embedded CBOR. Frames are bounded by MaxFrameBytes as
// the JSON ones are (the same frameLimiter), and cut or malformed frames
// end the watch with the same FrameError kinds.

import (
	"errors"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	cborserializer "k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/fxamacker/cbor/v2"

	"github.com/seed31a95821/informer/rest"
)

// unstructuredCBOR decodes CBOR into unstructured objects. It holds no
// state of its own: one serves every list and watch, concurrently.
var unstructuredCBOR = cborserializer.NewSerializer(nil, nil)

// cborAccept is the Accept header of an unstructured ListerWatcher
// configured for CBOR: CBOR if the server has it, else JSON.
const cborAccept = rest.ContentTypeCBOR + ", " + rest.ContentTypeJSON

// decodeUnstructuredListCBOR decodes a CBOR list body into list. Items
// that say nothing of their kind get the list's, as in JSON.
func decodeUnstructuredListCBOR(body []byte, list *unstructured.UnstructuredList) (apiVersion, kind string, err error) {
	if _, _, err := unstructuredCBOR.Decode(body, nil, list); err != nil {
		return "", "", fmt.Errorf("%w: CBOR: %w", ErrMalformedObject, err)
	}
	return list.GetAPIVersion(), list.GetKind(), nil
}

// countCBORItems reads how many items a CBOR list body holds from the
// head of its "items" array, without decoding any item: the count
// checkItemCount needs before the body is decoded. An array of
// indefinite length, which the API server never sends, is refused.
func countCBORItems(body []byte) (int, error) {
	var fields map[string]cborArrayHead
	if err := direct.Unmarshal(body, &fields); err != nil {
		return 0, err
	}
	items := fields["items"]
	if items.err != nil {
		return 0, items.err
	}
	return items.n, nil
}

// cborArrayHead is what the head of one CBOR data item says of it as an
// array: its element count, or why it is none. Null and a missing value
// count as no elements.
type cborArrayHead struct {
	n   int
	err error
}

// UnmarshalCBOR reads the head of one encoded data item. It never fails,
// so that a map of them reads any object; a value that is no array of
// definite length records why in err.
func (h *cborArrayHead) UnmarshalCBOR(b []byte) error {
	*h = cborArrayHead{}
	if len(b) == 0 {
		h.err = errors.New("empty data item")
		return nil
	}
	major, info := b[0]>>5, b[0]&0x1f
	if major == 7 && info == 22 { // null
		return nil
	}
	if major != 4 {
		h.err = errors.New(`"items" is not an array`)
		return nil
	}
	var n uint64
	switch {
	case info < 24:
		n = uint64(info)
	case info <= 27 && len(b) > 1<<(info-24):
		for _, c := range b[1 : 1+1<<(info-24)] {
			n = n<<8 | uint64(c)
		}
	default:
		h.err = errors.New(`"items" is an array of indefinite length`)
		return nil
	}
	if n > uint64(len(b)) { // each element takes a byte at least
		h.err = errors.New(`"items" claims more elements than it has bytes`)
		return nil
	}
	h.n = int(n)
	return nil
}

// cborFrameOptions make the decoder that finds where one frame ends: it
// checks that the data item is well formed, within the limits
// apimachinery's own CBOR decoding sets, without decoding it.
var cborFrameOptions = cbor.DecOptions{MaxNestedLevels: 10000, MaxArrayElements: 2147483647, MaxMapPairs: 2097152}

// cborEventDecoder decodes a CBOR sequence of watch events.
type cborEventDecoder struct {
	limit  *frameLimiter
	frames *cbor.Decoder // over limit
	t      *target
	raw    cbor.RawMessage // the last frame; reused
}

func newCBOREventDecoder(r io.Reader, maxFrame int64, t *target) (*cborEventDecoder, error) {
	dm, err := cborFrameOptions.DecMode()
	if err != nil {
		return nil, fmt.Errorf("wire: CBOR decoder: %w", err)
	}
	limit := &frameLimiter{r: r, max: maxFrame}
	return &cborEventDecoder{limit: limit, frames: dm.NewDecoder(limit), t: t}, nil
}

func (d *cborEventDecoder) Offset() int64 { return int64(d.frames.NumBytesRead()) }

func (d *cborEventDecoder) Next() (watch.Event, error) {
	// The decoder reads ahead: bytes past this frame's end belong to the
	// next ones, so the limit counts from this frame's first byte.
	start := d.Offset()
	d.limit.startFrame(start)
	if cap(d.raw) > retainedFrameBuffer {
		d.raw = nil // a rare huge object should not pin its memory
	}
	if err := d.frames.Decode(&d.raw); err != nil {
		return watch.Event{}, d.fail(start, err)
	}
	ev, err := d.decodeFrame(d.raw)
	if err != nil {
		return watch.Event{}, &FrameError{Kind: ErrMalformedFrame, Offset: start, Size: d.Offset() - start, Cause: err}
	}
	return ev, nil
}

// fail classifies a read error as the JSON decoder does.
func (d *cborEventDecoder) fail(start int64, err error) error {
	var readErr *limiterReadError
	begun := d.limit.delivered > start
	switch {
	case errors.Is(err, ErrFrameTooLarge):
		return &FrameError{Kind: ErrFrameTooLarge, Offset: start, Size: d.limit.max}
	case errors.As(err, &readErr) && begun:
		return &FrameError{Kind: ErrTruncatedFrame, Offset: start, Size: d.limit.delivered - start, Cause: readErr.err}
	case errors.As(err, &readErr):
		return fmt.Errorf("wire: reading watch stream: %w", readErr.err)
	case err == io.EOF && !begun:
		return io.EOF
	case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
		return &FrameError{Kind: ErrTruncatedFrame, Offset: start, Size: d.limit.delivered - start, Cause: io.ErrUnexpectedEOF}
	}
	return &FrameError{Kind: ErrMalformedFrame, Offset: start, Cause: err}
}

// decodeFrame decodes one event: its envelope, then its object, a Status
// for an ERROR event and an unstructured object otherwise.
func (d *cborEventDecoder) decodeFrame(frame []byte) (watch.Event, error) {
	var we metav1.WatchEvent
	if err := direct.Unmarshal(frame, &we); err != nil {
		return watch.Event{}, err
	}
	typ, err := parseEventType(we.Type)
	if err != nil {
		return watch.Event{}, err
	}
	raw := we.Object.Raw // a copy of its own (RawExtension.UnmarshalCBOR)
	if len(raw) == 0 {
		return watch.Event{}, errors.New(`event lacks "object"`)
	}
	var obj runtime.Object
	var apiVersion, kind string
	switch o := d.t.newForEvent(typ).(type) {
	case *metav1.Status:
		if err := direct.Unmarshal(raw, o); err != nil {
			return watch.Event{}, err
		}
		obj, apiVersion, kind = o, o.APIVersion, o.Kind
	case *unstructured.Unstructured:
		if _, _, err := unstructuredCBOR.Decode(raw, nil, o); err != nil {
			return watch.Event{}, err
		}
		obj, apiVersion, kind = o, o.GetAPIVersion(), o.GetKind()
	default:
		return watch.Event{}, fmt.Errorf("%w: CBOR for %T", rest.ErrUnsupportedMediaType, o)
	}
	return watch.Event{Type: typ, Object: d.t.finishEventObject(typ, obj, apiVersion, kind, raw, rest.ContentTypeCBOR, 0)}, nil
}
