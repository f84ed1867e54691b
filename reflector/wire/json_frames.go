package wire

// Reading a JSON watch stream a whole frame at a time, for pods whose
// parts are shared (json_parts.go). Delete this file and its hooks (the
// frames field of jsonEventDecoder, set by withParts, and its uses in Next
// and Offset), and the package is still correct, only slower: every frame
// is then read by the json.Decoder, and a pod's bytes are scanned twice
// more to be taken whole.
//
// Why it pays: to cut a pod's parts out, its bytes are needed whole, and
// a json.Decoder hands them out only after scanning them twice (once to
// find the value's end, once more to skip it into a json.RawMessage):
// a fifth of a JSON event's CPU. Here a frame's end is found by counting
// brackets outside strings, a few times faster than either scan, and the
// frame is split into its "type" and "object" by json_members.go.
//
// Why it is correct: only frames of the usual shape are read this way: an
// object, within MaxFrameBytes, whose members are "type" (a known event
// type, a plain string) and "object", once each, and whose object decodes.
// Bracket counting finds the end of every well-formed frame; encoding/json
// then checks the object's every byte as it decodes it. At the first frame
// of any other shape (or the stream's end, or a read error), the bytes
// from that frame's start on, then the rest of the stream, go to the
// json.Decoder as if it had read the stream from there: every error, and
// every unusual frame, is what it was (all but the count of bytes inside
// a json.SyntaxError, which that json.Decoder begins at that frame).
//
// It is bounded: a frame is looked for in at most MaxFrameBytes of
// whitespace and MaxFrameBytes of frame, held in a buffer of about twice
// MaxFrameBytes at most (most), scanned once (the scan resumes where it
// stopped when more bytes arrive), and a buffer larger than
// retainedFrameBuffer is given back once its frames are consumed.

import (
	"bytes"
	"encoding/json"
	"io"
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer/rest"
)

// jsonFrames reads whole JSON frames from a stream. It is used by one
// goroutine at a time and is not safe for concurrent use.
type jsonFrames struct {
	r      io.Reader
	max    int64
	buf    []byte // bytes read; buf[start:] not consumed yet
	start  int
	end    int   // the end of the frame next returned last
	offset int64 // stream offset of buf[start]
	err    error // r's error, once it returned one
}

// minFrameRead is the least room a read into the buffer is given.
const minFrameRead = 32 << 10

// next returns the next frame, from its opening brace to its closing one
// (not consumed yet: see consume), or false when there is no object frame
// within the limits before the stream ends or fails.
func (f *jsonFrames) next() (frame []byte, ok bool) {
	i := f.start // the scan's position
	open := -1   // the frame's opening brace, once found
	var scan frameScan
	for {
		for ; open < 0 && i < len(f.buf); i++ {
			if c := f.buf[i]; !isJSONSpace(c) {
				if c != '{' {
					return nil, false
				}
				open = i
				break
			}
		}
		if open >= 0 && int64(open-f.start) >= f.max {
			return nil, false // as the json.Decoder, which looks for the frame within max bytes
		}
		if open >= 0 {
			if end := scan.scan(f.buf, i); end >= 0 {
				if int64(end-open) > f.max {
					return nil, false
				}
				f.end = end
				return f.buf[open:end], true
			}
			i = len(f.buf)
		}
		if (open < 0 && int64(i-f.start) > f.max) || (open >= 0 && int64(i-open) > f.max) {
			return nil, false
		}
		shift, ok := f.fill()
		if !ok {
			return nil, false
		}
		i -= shift
		if open >= 0 {
			open -= shift
		}
	}
}

// frameScan is where a scan for the end of a frame stands, so that it
// resumes there when more bytes arrive.
type frameScan struct {
	depth             int
	inString, escaped bool
}

// scan scans b from i, and returns the index just past the bracket that
// closes the value open at the scan's start (brackets counted outside
// strings, of either kind), or -1 when b ends first.
func (s *frameScan) scan(b []byte, i int) int {
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case s.escaped:
			s.escaped = false
		case s.inString:
			s.escaped, s.inString = c == '\\', c != '"'
		case c == '"':
			if end := jsonStringEnd(b, i); end >= 0 {
				i = end // the whole string is here: the fast way
			} else {
				s.inString = true
			}
		case c == '{' || c == '[':
			s.depth++
		case c == '}' || c == ']':
			if s.depth--; s.depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

// most is the largest buffer doubling grows to: room for MaxFrameBytes of
// whitespace, a frame of MaxFrameBytes and one read. Past it the buffer
// grows only by what it must hold, so it never holds much more than the
// bytes a frame may be looked for in.
func (f *jsonFrames) most() int {
	return int(min(2*f.max+minFrameRead, math.MaxInt))
}

// fill reads more of the stream into buf, moving the unconsumed bytes to
// its front first, and returns by how much they moved.
func (f *jsonFrames) fill() (shift int, ok bool) {
	if f.err != nil {
		return 0, false
	}
	if cap(f.buf)-len(f.buf) < minFrameRead {
		shift = f.start
		n := len(f.buf) - f.start
		if cap(f.buf)-n < minFrameRead {
			grown := make([]byte, n, max(min(2*cap(f.buf), f.most()), n+minFrameRead))
			copy(grown, f.buf[f.start:])
			f.buf = grown
		} else {
			f.buf = f.buf[:copy(f.buf, f.buf[f.start:])]
		}
		f.start = 0
	}
	for range 100 { // a reader that returns nothing, again and again, is done
		n, err := f.r.Read(f.buf[len(f.buf):cap(f.buf)])
		f.buf = f.buf[:len(f.buf)+n]
		if err != nil {
			f.err = err
		}
		if n > 0 {
			return shift, true
		}
		if err != nil {
			return shift, false
		}
	}
	f.err = io.ErrNoProgress
	return shift, false
}

// consume moves past the frame next returned last.
func (f *jsonFrames) consume() {
	f.offset += int64(f.end - f.start)
	f.start = f.end
	switch unread := len(f.buf) - f.start; {
	case unread == 0 && cap(f.buf) <= retainedFrameBuffer:
		f.buf, f.start = f.buf[:0], 0
	case cap(f.buf) > retainedFrameBuffer && unread <= retainedFrameBuffer/2:
		// A rare huge frame should not pin its memory.
		f.buf, f.start = append([]byte(nil), f.buf[f.start:]...), 0
	}
}

// rest returns the stream from the first byte not consumed: the bytes
// read, then r's error once seen, or the rest of r.
func (f *jsonFrames) rest() io.Reader {
	unread := bytes.NewReader(f.buf[f.start:])
	if f.err != nil {
		return io.MultiReader(unread, errReader{f.err})
	}
	return io.MultiReader(unread, f.r)
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// nextFrame is Next for a frame read whole. false: d reads this frame,
// and every frame after it, with its json.Decoder.
func (d *jsonEventDecoder) nextFrame() (watch.Event, bool) {
	frame, ok := d.frames.next()
	if !ok {
		d.toDecoder()
		return watch.Event{}, false
	}
	ev, ok := d.decodeFrame(frame)
	if !ok {
		d.toDecoder()
		return watch.Event{}, false
	}
	d.frames.consume()
	return ev, true
}

// toDecoder hands the stream, from its first byte not consumed, to a
// json.Decoder.
func (d *jsonEventDecoder) toDecoder() {
	d.base = d.frames.offset
	d.limit = &frameLimiter{r: d.frames.rest(), max: d.limit.max}
	d.dec = json.NewDecoder(d.limit)
	d.frames = nil
}

// decodeFrame decodes a frame of the usual shape. false: it is not, or its
// object does not decode.
func (d *jsonEventDecoder) decodeFrame(frame []byte) (watch.Event, bool) {
	var typ watch.EventType
	var object span
	end, ok := jsonMembers(frame, 0, func(m jsonMember) (int, bool) {
		end, ok := jsonValueEnd(frame, m.value)
		switch {
		case !ok:
			return 0, false
		case string(m.key) == "type" && typ == "" && frame[m.value] == '"':
			typ, ok = eventTypes[string(frame[m.value+1:end-1])] // an escape: unknown
			return end, ok
		case string(m.key) == "object" && object.end == 0:
			object = span{start: m.value, end: end}
			return end, true
		}
		return 0, false
	})
	if !ok || end != len(frame) || typ == "" || object.end == 0 {
		return watch.Event{}, false
	}
	obj := d.t.newForEvent(typ)
	raw := object.of(frame)
	var hits partSet
	var err error
	if p, isPod := obj.(*corev1.Pod); isPod {
		hits, err = d.parts.decodePod(raw, p)
	} else {
		err = json.Unmarshal(raw, d.t.jsonSkip.jsonInto(obj))
	}
	if err != nil {
		return watch.Event{}, false
	}
	d.last, d.lastHits = obj, hits
	apiVersion, kind := typeMetaOf(obj)
	return watch.Event{Type: typ, Object: d.t.finishEventObject(typ, obj, apiVersion, kind, nil, rest.ContentTypeJSON, hits)}, true
}
