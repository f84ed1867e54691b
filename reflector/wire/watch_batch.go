package wire

// Delete this file and its hooks (the bufio.Reader newProtobufEventDecoder
// puts under the decoder, the result channel's capacity in newWatcher, and
// the call to decodeAhead in Watcher.run, which becomes a call to Next),
// and the watch is still correct, only slower to drain a backlog.
//
// Why it pays: the decoding goroutine hands each event to the reflector's
// goroutine, and a hand-off to a goroutine that is parked costs a wake-up
// (the runtime readies it and starts a thread to run it). Draining a
// backlog, the reflector applies an event faster than the next one is
// decoded, so it parks after every event and every event paid for a
// wake-up. Here the decoding goroutine decodes ahead while the next frame
// is already in its buffer, whole, so that decoding it cannot block, up to
// aheadMax events, and then sends them in a row on the buffered result
// channel: the reflector wakes once and takes them all (its drainReady).
// One event at a time (a live watch) nothing changes: nothing is buffered
// behind a frame, and each event is sent as soon as it is decoded.

import (
	"bufio"
	"encoding/binary"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// aheadMax bounds the events decoded ahead of the reflector: the result
// channel's capacity, and the most a batch holds. So at most 2 x aheadMax
// decoded events wait between the stream and the store.
const aheadMax = 32

// readBufferSize is the buffer under the protobuf watch decoder: a few
// typical pods' frames, so that a backlog yields several whole frames per
// read.
const readBufferSize = 32 << 10

// bufferedFramer is an eventDecoder that can tell whether its next frame is
// already buffered whole.
type bufferedFramer interface {
	frameReady() bool
}

// frameReady reports whether the next frame, length prefix and all, is in
// the buffer: Next will then neither read from the stream nor block.
func (d *protobufEventDecoder) frameReady() bool {
	br, ok := d.r.(*bufio.Reader)
	if !ok || br.Buffered() < 4 {
		return false
	}
	h, err := br.Peek(4)
	if err != nil {
		return false
	}
	return int64(binary.BigEndian.Uint32(h)) <= int64(br.Buffered()-4)
}

// frameReady forwards to the decoder it wraps.
func (d *reusingDecoder) frameReady() bool {
	f, ok := d.eventDecoder.(bufferedFramer)
	return ok && f.frameReady()
}

// decodeAhead decodes the next event and, while the following frame is
// already buffered whole (framer, watch_batch.go), the ones after it, up
// to aheadMax. It stops at an error, which it returns after the events
// decoded before it.
func (w *Watcher) decodeAhead(framer bufferedFramer, batch []watch.Event) ([]watch.Event, error) {
	for {
		ev, err := w.decoder.Next()
		if err != nil {
			return batch, err
		}
		if ev.Type == watch.Error {
			if st, ok := ev.Object.(*metav1.Status); ok && st != nil {
				w.redact.RedactStatus(st)
			}
		}
		batch = append(batch, ev)
		if framer == nil || len(batch) == aheadMax || !framer.frameReady() {
			return batch, nil
		}
	}
}
