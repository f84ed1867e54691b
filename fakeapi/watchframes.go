package fakeapi

import (
	"bytes"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
)

// Every watch of a resource sends the same event as the same bytes, when
// it asks for the same wire format. Encoding it once per watch made a
// write cost as many encodings as there were watches: under 2,000 idle
// watches a new watch waited seconds for its event. So, as kube-apiserver's
// watch cache does, an event is encoded once per wire format, on first
// use, into a whole frame that every watch wanting that format writes.
//
// Only identical frames are shared: a frame is named by the event's
// resourceVersion, the media type, the response shape (full object or
// PartialObjectMetadata), the event type a watch sends it as and whether
// it carries the object's previous state (the DELETED a selector sends
// when an object leaves its view). What differs per watch is never
// shared: Tables (their columns depend on the request, their first row
// carries the headers), bookmarks, ERROR events and the initial events of
// a replay. Frame faults act on a watch's copy of the bytes, never on the
// shared ones (watchStream.writeFrame).

// Bounds on the shared frames: past either, the oldest are forgotten, and
// a watch that still needs one encodes it again. Watches read the log in
// order and close behind each other, so the newest frames are the ones in
// use.
const (
	maxSharedFrames     = 4096
	maxSharedFrameBytes = 4 << 20
)

// frameKey names one shared frame.
type frameKey struct {
	rv        uint64
	mediaType string
	as        string
	typ       watch.EventType
	// prev: the object is the event's previous state, stamped with its
	// resourceVersion (watchStream.translate).
	prev bool
	// view is the version the frame shows the object in, nil for the
	// stored one (views.go): one event, one frame per version.
	view *resourceInfo
}

// sharedFrame is one encoded frame, built once by the first watch that
// needs it; the others wait on once and read frame, which is never
// modified after.
type sharedFrame struct {
	once  sync.Once
	frame []byte
	err   error
	// size is what the frame counts in the cache's bytes, set under the
	// cache's lock once it is built (0 until then).
	size int
}

// frameCache holds the shared frames. It is safe for concurrent use: every
// watch handler reads it. The zero value is ready.
type frameCache struct {
	mu      sync.Mutex // guards entries, order, bytes and every entry's size
	entries map[frameKey]*sharedFrame
	// order holds the keys in the order they were added, oldest first.
	order []frameKey
	bytes int
	// encodings counts the frames built, for tests.
	encodings atomic.Int64
}

// frame returns the frame named by key, calling build once to make it.
// The result is shared: callers must not modify it.
func (c *frameCache) frame(key frameKey, build func() ([]byte, error)) ([]byte, error) {
	c.mu.Lock()
	f := c.entries[key]
	if f == nil {
		if c.entries == nil {
			c.entries = map[frameKey]*sharedFrame{}
		}
		f = &sharedFrame{}
		c.entries[key] = f
		c.order = append(c.order, key)
	}
	c.mu.Unlock()
	built := false
	f.once.Do(func() {
		built = true
		c.encodings.Add(1)
		f.frame, f.err = build()
	})
	if built {
		c.account(key, f)
	}
	return f.frame, f.err
}

// account counts a frame just built, unless it was forgotten meanwhile,
// and forgets the oldest frames while the cache is over either bound.
func (c *frameCache) account(key frameKey, f *sharedFrame) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries[key] == f {
		f.size = len(f.frame)
		c.bytes += f.size
	}
	for len(c.order) > 0 && (len(c.order) > maxSharedFrames || c.bytes > maxSharedFrameBytes) {
		old := c.order[0]
		c.order = c.order[1:]
		if e := c.entries[old]; e != nil {
			c.bytes -= e.size
			delete(c.entries, old)
		}
	}
}

// encodeFrame encodes obj as a watch event of type typ, framed for the
// encoding's stream: the bytes a watch writes.
func encodeFrame(enc encoding, typ watch.EventType, obj runtime.Object) ([]byte, error) {
	var object, frame bytes.Buffer
	if err := enc.encode(obj, &object); err != nil {
		return nil, err
	}
	stream := enc.info.StreamSerializer
	frames := streaming.NewEncoder(stream.Framer.NewFrameWriter(&frame), stream.Serializer)
	ev := metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: object.Bytes()}}
	if err := frames.Encode(&ev); err != nil {
		return nil, err
	}
	return frame.Bytes(), nil
}
