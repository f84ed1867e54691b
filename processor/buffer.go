package processor

// chunkLen is the number of entries in one chunk of a buffer. It trades
// allocation frequency under load (one allocation per chunkLen notifications
// a handler falls behind) against the memory an idle handler keeps (at most
// two chunks, 2 KiB, see buffer).
const chunkLen = 128

// chunk is a fixed-size block of entries, linked to the next one.
type chunk struct {
	entries [chunkLen]*Notification
	next    *chunk
}

// buffer is an unbounded FIFO of notifications made of a linked list of chunks.
//
// Why chunks rather than a growing ring (client-go's choice): a ring must be
// reallocated and copied to grow, and client-go never shrinks it, so one
// burst pins its peak size for the life of the process (kubernetes#122067).
// Here growing allocates one more chunk and copies nothing, and a chunk is
// released as soon as the reader has drained it. The buffer keeps at most one
// spare chunk besides the one it reads from, so an idle handler holds at most
// 2*chunkLen entries whatever burst it went through, and a handler that keeps
// up with the stream reuses the same chunk without allocating at all.
//
// Why pointers rather than copies: Distribute stores each notification once
// and every handler's buffer points to it, so appending costs a handler 8
// bytes instead of a 64-byte copy, and a handler 10,000 notifications behind
// holds 80 KB of buffer, not 640 KB. Handlers still receive a copy (Handle
// takes a value), so the sharing is invisible to them. The sync marker is
// one more pointer, recognised by identity (see Processor.marker).
//
// A buffer is not safe for concurrent use; its owner (Registration) guards it.
type buffer struct {
	head    *chunk // chunk read from; nil when the buffer holds no chunk
	tail    *chunk // chunk written to
	headPos int    // index of the next entry to read in head
	tailPos int    // index of the next entry to write in tail
	length  int    // number of entries held
	spare   *chunk // one drained chunk kept for reuse, or nil
	chunks  int    // chunks allocated and held (list and spare), for capacity
}

// push appends e at the tail.
func (b *buffer) push(e *Notification) {
	switch {
	case b.tail == nil:
		b.head = b.newChunk()
		b.tail = b.head
		b.headPos, b.tailPos = 0, 0
	case b.tailPos == chunkLen:
		c := b.newChunk()
		b.tail.next = c
		b.tail = c
		b.tailPos = 0
	}
	b.tail.entries[b.tailPos] = e
	b.tailPos++
	b.length++
}

// popInto moves up to len(dst) entries from the head into dst and returns
// how many it moved. Taking a batch per lock acquisition is what lets the
// handler's goroutine and Distribute share a mutex without contending on
// every notification.
func (b *buffer) popInto(dst []*Notification) int {
	n := 0
	for n < len(dst) && b.length > 0 {
		dst[n] = b.head.entries[b.headPos]
		// Clear the slot so that the buffer does not keep the object alive
		// after the handler is done with it.
		b.head.entries[b.headPos] = nil
		b.headPos++
		b.length--
		n++
		b.advanceHead()
	}
	return n
}

// advanceHead releases the head chunk once it is fully read, and rewinds an
// emptied single chunk so that a handler keeping up never leaves its first
// chunk.
func (b *buffer) advanceHead() {
	if b.length == 0 && b.head == b.tail {
		b.headPos, b.tailPos = 0, 0
		return
	}
	if b.headPos < chunkLen {
		return
	}
	drained := b.head
	b.head = drained.next
	b.headPos = 0
	b.recycle(drained)
}

// newChunk returns the spare chunk if there is one, else a new chunk.
func (b *buffer) newChunk() *chunk {
	if c := b.spare; c != nil {
		b.spare = nil
		return c
	}
	b.chunks++
	return new(chunk)
}

// recycle keeps a drained chunk as the spare, or drops it for the garbage
// collector when there already is one: this is where the buffer shrinks.
func (b *buffer) recycle(c *chunk) {
	c.next = nil
	if b.spare == nil {
		b.spare = c
		return
	}
	b.chunks--
}

// len returns the number of entries held.
func (b *buffer) len() int { return b.length }

// capacity returns how many entries the chunks currently held could store.
func (b *buffer) capacity() int { return b.chunks * chunkLen }

// reset drops everything, releasing all chunks.
func (b *buffer) reset() { *b = buffer{} }
