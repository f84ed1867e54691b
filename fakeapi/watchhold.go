package fakeapi

import (
	"bytes"
	"context"
)

// A held watch (Faults.HoldWatches) goes on reading and encoding its events
// but keeps the frames in memory until the hold ends, then writes them in
// one go: the client drains a backlog that is ready, as from a proxy that
// buffered the stream, and its pace is its own, not the encoder's.

// maxHeldBytes bounds what one held watch keeps; past it the watch reads
// no further events until the hold ends.
const maxHeldBytes = 512 << 20

// holdOrRelease writes what the watch held once the hold is over, waiting
// for that end if the watch already holds maxHeldBytes. It reports false
// when the stream should end.
func (ws *watchStream) holdOrRelease(ctx context.Context) bool {
	if ws.holding == nil {
		return true
	}
	if ws.held.Len() >= maxHeldBytes && !ws.waitStall(ctx, ws.holding, 0) {
		return false
	}
	select {
	case <-ws.holding:
		return ws.releaseHeld()
	default:
		return true
	}
}

// holdFrame keeps one frame, or the malformed frame that replaces it.
func (ws *watchStream) holdFrame(frame []byte, fault frameFaultKind) bool {
	if fault == frameMalformed {
		frame = malformedFrame(ws.enc.mediaType)
	}
	ws.held.Write(frame)
	ws.heldFrames.Add(1)
	return true
}

// endHold writes what the watch still holds as it ends (an ERROR event
// among it, perhaps), as a buffering proxy would once its upstream ends.
func (ws *watchStream) endHold() {
	if ws.holding != nil {
		ws.releaseHeld()
	}
}

// releaseHeld writes and flushes what the watch held, and stops holding.
// It reports false when the stream is broken.
func (ws *watchStream) releaseHeld() bool {
	ws.holding, ws.heldFrames = nil, nil
	if ws.held.Len() > 0 && !ws.broken {
		if _, err := ws.w.Write(ws.held.Bytes()); err != nil {
			ws.broken = true
		}
	}
	ws.held = bytes.Buffer{}
	ws.flush()
	return !ws.broken
}
