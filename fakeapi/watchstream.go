package fakeapi

import (
	"bytes"
	"net/http"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
)

// watchStream writes one watch response. The wire format is apimachinery's:
// each event is a metav1.WatchEvent whose object is encoded on its own
// (JSON, or protobuf with the "k8s\x00" envelope), then the event is
// framed by the media type's framer (newline-delimited JSON, or a 4-byte
// big-endian length prefix for protobuf).
//
// Each frame is built in a buffer before it is written, which is what lets
// the fault injector cut it in half or replace it with garbage. The frames
// of logged events are built once per wire format and shared by every
// watch that writes the same bytes (watchframes.go).
//
// A watchStream is used by one request goroutine only.
type watchStream struct {
	s       *Server
	w       http.ResponseWriter
	flusher http.Flusher
	enc     encoding
	res     *resourceInfo
	filter  filter
	id      uint64
	// cursor is the RV up to which this watch has seen the log.
	cursor    uint64
	bookmarks bool
	// lastBookmarkAt is when, after the watch starts, its bookmark before
	// the timeout is due; 0 when the watch has no timeout.
	lastBookmarkAt time.Duration

	frames   streaming.Encoder
	frameBuf bytes.Buffer
	objBuf   bytes.Buffer
	// alloc is where the serializer encodes (watchAllocator).
	alloc watchAllocator
	// broken is set once a write failed: the client is gone.
	broken bool
	// dropped is the DropWatches generation this watch belongs to, taken
	// when the request arrived (see Server.dropGeneration), so that a drop
	// issued once the server has received the request always ends it.
	dropped <-chan struct{}

	// holding is the end of the hold (HoldWatches) this watch is under,
	// nil when it is not held; held is what it holds meanwhile, and
	// heldFrames the hold's count of frames (watchhold.go).
	holding    <-chan struct{}
	held       bytes.Buffer
	heldFrames *atomic.Int64
}

func newWatchStream(s *Server, w http.ResponseWriter, flusher http.Flusher, enc encoding, req requestInfo, opts metainternalversion.ListOptions) *watchStream {
	ws := &watchStream{
		s: s, w: w, flusher: flusher, enc: enc, res: req.res,
		filter:    newFilter(req, opts),
		id:        s.sent.nextWatchID(),
		bookmarks: opts.AllowWatchBookmarks,
		dropped:   req.dropped,
	}
	stream := enc.info.StreamSerializer
	var frameEnc runtime.Encoder = stream.Serializer
	if ea, ok := frameEnc.(runtime.EncoderWithAllocator); ok {
		frameEnc = runtime.NewEncoderWithAllocator(ea, &ws.alloc)
	}
	ws.frames = streaming.NewEncoder(stream.Framer.NewFrameWriter(&ws.frameBuf), frameEnc)
	return ws
}

// watchAllocator is the memory a watch's protobuf serializer encodes an
// object and then its event into, before they are copied to objBuf and
// frameBuf. While the watch sends its initial events, thousands of objects
// in a row, it is one pooled runtime.Allocator, reused for each, as
// kube-apiserver's watch handler does; otherwise a fresh buffer each time,
// so that an idle watch holds no such memory. Before, every initial event
// took two fresh buffers, its object's size each.
type watchAllocator struct{ a *runtime.Allocator }

// pooled takes an Allocator from the pool until the returned func puts it
// back.
func (w *watchAllocator) pooled() func() {
	w.a = runtime.AllocatorPool.Get().(*runtime.Allocator)
	return func() {
		runtime.AllocatorPool.Put(w.a)
		w.a = nil
	}
}

func (w *watchAllocator) Allocate(n uint64) []byte {
	if w.a != nil {
		return w.a.Allocate(n)
	}
	return make([]byte, n)
}

// writeHeader commits the 200 response. Without a Content-Length Go's
// server uses chunked transfer encoding, and each flush sends a chunk.
func (ws *watchStream) writeHeader() {
	contentType := ws.enc.mediaType
	switch contentType {
	case mediaProtobuf:
		contentType += ";stream=watch"
	case mediaCBOR:
		contentType = runtime.ContentTypeCBORSequence // CBOR objects back to back (RFC 8742)
	}
	ws.w.Header().Set("Content-Type", contentType)
	ws.w.Header().Set("Cache-Control", "no-cache, private")
	ws.w.WriteHeader(http.StatusOK)
	ws.flush()
}

// send writes one event, encoded for this watch alone. It reports false
// when the stream is broken.
func (ws *watchStream) send(typ watch.EventType, obj runtime.Object, initial bool) bool {
	ws.objBuf.Reset()
	if err := ws.enc.encodeWith(obj, &ws.objBuf, &ws.alloc); err != nil {
		ws.broken = true
		return false
	}
	if ws.enc.table != nil {
		// Only a watch's first Table carries the column definitions.
		ws.enc.table.OmitHeaders()
	}
	m, _ := meta.Accessor(obj)
	ws.record(typ, m, "", initial)
	return ws.writeFrame(typ)
}

// sendLogged writes an event of the log as this watch sees it (translate):
// as type typ, carrying the event's object, or, with fromPrev, its previous
// state stamped with the event's resourceVersion. Unless the watch's
// frames are its own (sharesFrames), the frame is the one every watch in
// the same format writes, encoded once (watchframes.go).
func (ws *watchStream) sendLogged(ev event, typ watch.EventType, fromPrev bool) bool {
	object := func() runtime.Object {
		if !fromPrev {
			return ev.obj
		}
		gone := ev.prev.DeepCopyObject()
		setRV(gone, ev.rv)
		return gone
	}
	if !ws.sharesFrames() {
		return ws.send(typ, object(), false)
	}
	key := frameKey{rv: ev.rv, mediaType: ws.enc.mediaType, as: ws.enc.as, typ: typ, prev: fromPrev, view: ws.enc.view}
	frame, err := ws.s.frames.frame(key, func() ([]byte, error) { return encodeFrame(ws.enc, typ, object()) })
	if err != nil {
		ws.broken = true
		return false
	}
	shown := ev.obj
	if fromPrev {
		shown = ev.prev
	}
	m, _ := meta.Accessor(shown)
	ws.record(typ, m, formatRV(ev.rv), false)
	return ws.writeOut(frame)
}

// sharesFrames tells whether this watch's events are the same bytes as
// every other watch's in its media type and shape: not so for Tables,
// whose columns depend on the request and whose first row differs.
func (ws *watchStream) sharesFrames() bool {
	return ws.enc.table == nil && (ws.enc.as == asFull || ws.enc.as == asPartial)
}

// record notes a sent event in the server's record; rv, when not empty,
// overrides the object's resourceVersion.
func (ws *watchStream) record(typ watch.EventType, m metav1.Object, rv string, initial bool) {
	e := SentEvent{WatchID: ws.id, Resource: ws.res.gvr, Type: typ, InitialEvent: initial, ResourceVersion: rv}
	if ws.enc.view != nil {
		e.Resource = ws.enc.view.gvr // the resource the client watches
	}
	if m != nil {
		e.Namespace, e.Name = m.GetNamespace(), m.GetName()
		if rv == "" {
			e.ResourceVersion = m.GetResourceVersion()
		}
	}
	ws.s.sent.add(e)
}

// sendBookmark writes a BOOKMARK carrying the watch's cursor. The object is
// an empty instance of the resource's kind with only resourceVersion (and,
// after initial events, the k8s.io/initial-events-end annotation) set.
func (ws *watchStream) sendBookmark(initialEnd bool) bool {
	obj, err := ws.s.newObject(ws.res)
	if err != nil {
		return false
	}
	obj.GetObjectKind().SetGroupVersionKind(ws.res.Kind)
	setRV(obj, ws.cursor)
	if initialEnd {
		m, _ := meta.Accessor(obj)
		m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	}
	return ws.send(watch.Bookmark, obj, initialEnd)
}

// sendError writes an ERROR event carrying err as a Status, then flushes.
func (ws *watchStream) sendError(err error) {
	status := toStatus(err)
	ws.objBuf.Reset()
	if ws.enc.info.Serializer.Encode(status, &ws.objBuf) != nil {
		return
	}
	ws.record(watch.Error, nil, "", false)
	if ws.writeFrame(watch.Error) {
		ws.flush()
	}
}

// writeFrame frames ws.objBuf as an event of the given type and writes it.
func (ws *watchStream) writeFrame(typ watch.EventType) bool {
	if ws.broken {
		return false
	}
	ws.frameBuf.Reset()
	ev := metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: ws.objBuf.Bytes()}}
	if err := ws.frames.Encode(&ev); err != nil {
		ws.broken = true
		return false
	}
	return ws.writeOut(ws.frameBuf.Bytes())
}

// writeOut writes one whole frame, applying any frame fault. The frame may
// be shared with other watches: it is only read.
func (ws *watchStream) writeOut(frame []byte) bool {
	if ws.broken {
		return false
	}
	// A hold applies from the first frame written after HoldWatches
	// returns, however far the stream's loop has got.
	fault, released, held := ws.s.faults.onFrame(ws.res.gvr.Resource, ws.holding != nil)
	if ws.holding == nil && released != nil {
		ws.holding, ws.heldFrames = released, held
	}
	if ws.holding != nil {
		if fault != frameCut {
			return ws.holdFrame(frame, fault)
		}
		ws.releaseHeld() // the cut frame goes out after what was held
	}
	switch fault {
	case frameCut:
		// Half a frame, then an abrupt end of the connection: the client
		// sees a truncated event, as when a proxy dies mid-write.
		_, _ = ws.w.Write(frame[:len(frame)/2])
		ws.flush()
		panic(http.ErrAbortHandler)
	case frameMalformed:
		frame = malformedFrame(ws.enc.mediaType)
	}
	if _, err := ws.w.Write(frame); err != nil {
		ws.broken = true
		return false
	}
	return true
}

func (ws *watchStream) flush() {
	if !ws.broken && ws.holding == nil {
		ws.flusher.Flush()
	}
}

// malformedFrame is a frame that is well delimited but does not decode:
// the client's decoder fails on it rather than waiting for more bytes.
func malformedFrame(mediaType string) []byte {
	if mediaType == mediaProtobuf {
		garbage := []byte("\xff\xfe not a protobuf watch event")
		return append([]byte{0, 0, 0, byte(len(garbage))}, garbage...)
	}
	return []byte("{\"type\":\"ADDED\",\"object\":{this is not json}}\n")
}

// setRV stamps a resourceVersion on an object the caller owns.
func setRV(obj runtime.Object, rv uint64) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetResourceVersion(formatRV(rv))
	}
}
