package wire

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/seed31a95821/informer/rest"
	"io"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// A watch response body is a stream of frames, one event per frame:
//
//	JSON:     {"type":"ADDED","object":{...the object...}}\n  (back to back)
//	protobuf: [4-byte big-endian length][metav1.WatchEvent]     (back to back)
//
// client-go decodes each frame twice: first into a metav1.WatchEvent whose
// object is left as raw bytes, then those bytes again into the typed object
// (kubernetes/kubernetes#138842). The decoders below go from frame to typed
// object in one pass:
//
//   - JSON: a streaming json.Decoder reads the event's keys as tokens. Once
//     "type" is known, the value under "object" is decoded straight into a
//     fresh typed object. The object's bytes are never copied out first.
//   - protobuf: the frame is read into a reused buffer, the two envelopes
//     (WatchEvent, runtime.Unknown) are walked in place, and the object's
//     bytes are unmarshalled once.
//
// That is the rule for an ordinary event of the watched kind; doc.go
// ("Decoding a watch once") lists the exceptions: "object" before "type",
// an object of another kind, and relists that reuse cached objects.

// eventDecoder turns a watch body into events. It is used by one goroutine
// at a time and is not safe for concurrent use.
type eventDecoder interface {
	// Next decodes the next frame. It returns io.EOF when the stream ends
	// cleanly between frames, a *FrameError when the stream cannot be
	// decoded further, or the reader's own error (wrapped).
	Next() (watch.Event, error)
	// Offset is the number of stream bytes consumed so far.
	Offset() int64
}

// partsSharer is an eventDecoder whose objects may share parts with each
// other (protobuf_parts.go, json_parts.go).
type partsSharer interface {
	// sharedParts returns the parts obj shares with other objects when it
	// is the last object decoded, and none for any other object.
	sharedParts(obj runtime.Object) partSet
}

func (d *jsonEventDecoder) sharedParts(obj runtime.Object) partSet {
	if obj != d.last {
		return 0
	}
	return d.lastHits
}

func (d *protobufEventDecoder) sharedParts(obj runtime.Object) partSet {
	if obj != d.last {
		return 0
	}
	return d.lastHits
}

// eventTypes maps the wire spelling of an event type to its constant. Any
// other spelling makes the frame malformed.
var eventTypes = map[string]watch.EventType{
	string(watch.Added):    watch.Added,
	string(watch.Modified): watch.Modified,
	string(watch.Deleted):  watch.Deleted,
	string(watch.Bookmark): watch.Bookmark,
	string(watch.Error):    watch.Error,
}

func parseEventType(s string) (watch.EventType, error) {
	if t, ok := eventTypes[s]; ok {
		return t, nil
	}
	return "", fmt.Errorf("unknown watch event type %q", s)
}

// ---- JSON ----

// jsonEventDecoder decodes newline- or whitespace-separated JSON events.
type jsonEventDecoder struct {
	limit             *frameLimiter
	dec               *json.Decoder
	base              int64 // the stream offset where dec began
	t                 *target
	unstructuredState // unstructured.go
	// parts decodes pods with their repeated parts shared (json_parts.go;
	// nil: none); lastHits are the parts last, the last pod it decoded,
	// shares with others.
	parts    *jsonPartsDecoder
	last     runtime.Object
	lastHits partSet
	// frames, while set, reads the stream a whole frame at a time, in
	// place of dec (json_frames.go).
	frames *jsonFrames
}

func newJSONEventDecoder(r io.Reader, maxFrame int64, t *target) *jsonEventDecoder {
	limit := &frameLimiter{r: r, max: maxFrame}
	return &jsonEventDecoder{limit: limit, dec: json.NewDecoder(limit), t: t}
}

func (d *jsonEventDecoder) Offset() int64 {
	if d.frames != nil {
		return d.frames.offset
	}
	return d.base + d.dec.InputOffset()
}

func (d *jsonEventDecoder) Next() (watch.Event, error) {
	if d.frames != nil {
		if ev, ok := d.nextFrame(); ok {
			return ev, nil
		}
	}
	// More skips the whitespace separating frames, so that InputOffset is
	// then the exact first byte of the frame: the size limit and the
	// offsets in errors count the frame itself, not the newline before it.
	d.limit.startFrame(d.dec.InputOffset())
	d.dec.More()
	start := d.dec.InputOffset()
	d.limit.startFrame(start)
	tok, err := d.dec.Token()
	if err == io.EOF {
		return watch.Event{}, io.EOF
	}
	if err != nil {
		// Only whitespace (if anything) of a next frame arrived.
		return watch.Event{}, d.fail(start, err, false)
	}
	if tok != json.Delim('{') {
		return watch.Event{}, d.fail(start, fmt.Errorf("frame starts with %v, want a JSON object", tok), true)
	}
	ev, deferred, err := d.readEventFields()
	if err != nil {
		return watch.Event{}, d.fail(start, err, true)
	}
	if _, err := d.dec.Token(); err != nil { // the closing '}'
		return watch.Event{}, d.fail(start, err, true)
	}
	if deferred != nil {
		// "object" came before "type": a legal but unusual order (the API
		// server writes "type" first). Only then do we pay a second pass.
		ev.Object = d.t.newForEvent(ev.Type)
		if err := json.Unmarshal(deferred, d.t.jsonSkip.jsonInto(ev.Object)); err != nil {
			return watch.Event{}, d.fail(start, err, true)
		}
	}
	if ev.Type == "" || ev.Object == nil {
		return watch.Event{}, d.fail(start, errors.New(`event lacks "type" or "object"`), true)
	}
	apiVersion, kind := typeMetaOf(ev.Object)
	ev.Object = d.t.finishEventObject(ev.Type, ev.Object, apiVersion, kind, nil, rest.ContentTypeJSON, d.sharedParts(ev.Object))
	return ev, nil
}

// readEventFields reads the keys of one event object up to (not including)
// its closing brace. When "object" precedes "type" its raw bytes are
// returned as deferred, to be decoded once the type is known.
func (d *jsonEventDecoder) readEventFields() (ev watch.Event, deferred json.RawMessage, err error) {
	for d.dec.More() {
		keyTok, err := d.dec.Token()
		if err != nil {
			return ev, nil, err
		}
		key, _ := keyTok.(string)
		switch {
		case key == "type" && ev.Type == "":
			var s string
			if err := d.dec.Decode(&s); err != nil {
				return ev, nil, err
			}
			if ev.Type, err = parseEventType(s); err != nil {
				return ev, nil, err
			}
		case key == "object" && ev.Object == nil && deferred == nil:
			if ev.Type == "" {
				if err := d.dec.Decode(&deferred); err != nil {
					return ev, nil, err
				}
				continue
			}
			if ev.Object, err = d.decodeObjectValue(ev.Type); err != nil {
				return ev, nil, err
			}
		case key == "type" || key == "object":
			return ev, nil, fmt.Errorf("duplicate key %q in watch event", key)
		default: // unknown keys are skipped, for forward compatibility
			var skip json.RawMessage
			if err := d.dec.Decode(&skip); err != nil {
				return ev, nil, err
			}
		}
	}
	return ev, deferred, nil
}

// fail classifies a decoding error: size and truncation become their
// FrameError kinds, reader errors cut the frame when it had begun (its
// opening brace was read) and pass through otherwise, and everything else
// is malformed.
func (d *jsonEventDecoder) fail(start int64, err error, begun bool) error {
	var readErr *limiterReadError
	size := d.limit.delivered - start // dec's offsets
	start += d.base                   // the stream's
	switch {
	case errors.Is(err, ErrFrameTooLarge):
		return &FrameError{Kind: ErrFrameTooLarge, Offset: start, Size: d.limit.max}
	case errors.As(err, &readErr):
		// The connection failed. If part of a frame had arrived, the frame
		// is cut; either way the cause is kept for errors.Is/As.
		if begun {
			return &FrameError{Kind: ErrTruncatedFrame, Offset: start, Size: size, Cause: readErr.err}
		}
		return fmt.Errorf("wire: reading watch stream: %w", readErr.err)
	case errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF: // EOF after the frame began
		return &FrameError{Kind: ErrTruncatedFrame, Offset: start, Size: size, Cause: io.ErrUnexpectedEOF}
	}
	return &FrameError{Kind: ErrMalformedFrame, Offset: start, Cause: err}
}

// frameLimiter sits between the body and the json.Decoder and refuses to
// hand out more than max bytes past the start of the current frame. The
// decoder reads ahead, so bytes it holds but has not consumed belong to the
// next frames; counting from the decoder's InputOffset (the exact start of
// the current frame) makes the limit exact rather than approximate.
type frameLimiter struct {
	r          io.Reader
	max        int64
	delivered  int64 // bytes handed to the decoder so far
	frameStart int64 // stream offset where the current frame starts
}

// limiterReadError marks errors that came from the underlying reader, so
// they can be told apart from the decoder's own syntax errors.
type limiterReadError struct{ err error }

func (e *limiterReadError) Error() string { return e.err.Error() }
func (e *limiterReadError) Unwrap() error { return e.err }

func (l *frameLimiter) startFrame(offset int64) { l.frameStart = offset }

func (l *frameLimiter) Read(p []byte) (int, error) {
	allowed := l.frameStart + l.max - l.delivered
	if allowed <= 0 {
		return 0, ErrFrameTooLarge
	}
	if int64(len(p)) > allowed {
		p = p[:allowed]
	}
	n, err := l.r.Read(p)
	l.delivered += int64(n)
	if err != nil && err != io.EOF {
		// io.EOF stays bare: json.Decoder turns it into io.EOF (between
		// values) or io.ErrUnexpectedEOF (inside one), which we rely on.
		err = &limiterReadError{err: err}
	}
	return n, err
}

// ---- protobuf ----

// retainedFrameBuffer is the largest frame buffer a protobuf decoder keeps
// between frames. A rare huge object should not pin its memory for the
// life of the watch.
const retainedFrameBuffer = 1 << 20

// protobufEventDecoder decodes length-prefixed metav1.WatchEvent frames.
type protobufEventDecoder struct {
	r      io.Reader
	max    int64
	t      *target
	buf    []byte // reused frame buffer, at most retainedFrameBuffer long
	offset int64
	header [4]byte
	// unchanged, set for a WatchList with Options.Relist (relist_reuse.go),
	// is asked about each ADDED object's identity before it is decoded.
	unchanged func(runtime.Object) runtime.Object
	// objects decodes the watched kind's objects (nil: their generated
	// Unmarshal); lastHits are the parts the last object decoded shares
	// with others (protobuf_parts.go), for the sharing that runs after
	// (relist_reuse.go) to leave alone.
	objects  *protoDecoder
	last     runtime.Object
	lastHits partSet
}

func newProtobufEventDecoder(r io.Reader, maxFrame int64, t *target) *protobufEventDecoder {
	// A buffer of its own lets Watcher.run see whether the next frame has
	// already arrived (watch_batch.go).
	return &protobufEventDecoder{r: bufio.NewReaderSize(r, readBufferSize), max: maxFrame, t: t}
}

func (d *protobufEventDecoder) Offset() int64 { return d.offset }

func (d *protobufEventDecoder) Next() (watch.Event, error) {
	start := d.offset
	n, err := io.ReadFull(d.r, d.header[:])
	d.offset += int64(n)
	if err != nil {
		return watch.Event{}, d.readFailure(start, 0, err)
	}
	size := int64(binary.BigEndian.Uint32(d.header[:]))
	if size > d.max {
		// Refuse before reading: the length prefix alone is enough to know.
		return watch.Event{}, &FrameError{Kind: ErrFrameTooLarge, Offset: start, Size: size}
	}
	frame := d.frameBuffer(int(size))
	n, err = io.ReadFull(d.r, frame)
	d.offset += int64(n)
	if err != nil {
		return watch.Event{}, d.readFailure(start, size, err)
	}
	ev, err := d.decodeFrame(frame)
	if err != nil {
		return watch.Event{}, &FrameError{Kind: ErrMalformedFrame, Offset: start, Size: size, Cause: err}
	}
	return ev, nil
}

// readFailure classifies a read error the way the JSON decoder does: a clean
// EOF between frames ends the stream, any failure once a frame has begun
// cuts that frame, and a connection error between frames passes through.
func (d *protobufEventDecoder) readFailure(start, size int64, err error) error {
	switch {
	case err == io.EOF && d.offset == start:
		return io.EOF
	case err == io.ErrUnexpectedEOF || err == io.EOF:
		return &FrameError{Kind: ErrTruncatedFrame, Offset: start, Size: size, Cause: io.ErrUnexpectedEOF}
	case d.offset > start:
		return &FrameError{Kind: ErrTruncatedFrame, Offset: start, Size: size, Cause: err}
	}
	return fmt.Errorf("wire: reading watch stream: %w", err)
}

// frameBuffer returns a buffer of length n, reusing the retained one.
func (d *protobufEventDecoder) frameBuffer(n int) []byte {
	if n > retainedFrameBuffer {
		return make([]byte, n)
	}
	if cap(d.buf) < n {
		d.buf = make([]byte, n, max(n, 4096))
	}
	return d.buf[:n]
}

func (d *protobufEventDecoder) decodeFrame(frame []byte) (watch.Event, error) {
	rawType, rawObject, err := parseProtoWatchEvent(frame)
	if err != nil {
		return watch.Event{}, err
	}
	// Indexing the map with string(rawType) directly lets the compiler skip
	// allocating the string.
	typ, ok := eventTypes[string(rawType)]
	if !ok {
		return watch.Event{}, fmt.Errorf("unknown watch event type %q", rawType)
	}
	env, err := parseProtoEnvelope(rawObject)
	if err != nil {
		return watch.Event{}, err
	}
	if len(env.contentEncoding) > 0 {
		return watch.Event{}, fmt.Errorf("content encoding %q is not supported", env.contentEncoding)
	}
	// Decide the Go type before decoding: an object of another kind is not
	// decoded at all, only passed on as *runtime.Unknown.
	if !d.wants(typ, env) {
		return watch.Event{Type: typ, Object: &runtime.Unknown{
			TypeMeta:    runtime.TypeMeta{APIVersion: string(env.apiVersion), Kind: string(env.kind)},
			Raw:         append([]byte(nil), env.raw...), // the frame buffer is reused
			ContentType: rest.ContentTypeProtobuf,
		}}, nil
	}
	if typ == watch.Added && d.unchanged != nil {
		if cached := peekUnchanged(env.raw, d.unchanged); cached != nil {
			return watch.Event{Type: typ, Object: cached}, nil
		}
	}
	obj := d.t.newForEvent(typ)
	pu, ok := obj.(protoUnmarshaler)
	if !ok {
		return watch.Event{}, fmt.Errorf("%T has no protobuf form", obj)
	}
	objects := d.objects
	if typ == watch.Error {
		objects = nil // a Status
	}
	hits, err := objects.decode(env.raw, pu)
	if err != nil {
		return watch.Event{}, fmt.Errorf("decoding %s: %w", env.kind, err)
	}
	d.last, d.lastHits = obj, hits
	// The kind was checked above; an empty kind makes finishEventObject
	// stamp the expected type information without checking again.
	return watch.Event{Type: typ, Object: d.t.finishEventObject(typ, obj, "", "", nil, rest.ContentTypeProtobuf, hits)}, nil
}

// wants reports whether the enveloped object is of the Go type expected for
// this event type. The string conversions do not escape, so they do not
// allocate.
func (d *protobufEventDecoder) wants(typ watch.EventType, env protoEnvelope) bool {
	if typ == watch.Error {
		return string(env.kind) == statusGVK.Kind
	}
	return d.t.itemKindOK(string(env.apiVersion), string(env.kind))
}
