package processor

import (
	"sync"
	"sync/atomic"
)

// pageLen is the number of entries in one page of the journal: the unit in
// which the journal grows, and in which handlers give memory back.
const pageLen = 128

// spareLen is how many emptied pages the journal keeps for reuse for as
// long as it lives: enough for handlers that keep up, which read one page
// while the writer fills the next. Pages emptied beyond that go to a
// sync.Pool, where the writer finds them while the load lasts and the
// garbage collector reclaims them once it is over (a handler's backlog
// swings by thousands of notifications under load: without the pool each
// swing would allocate its pages anew).
const spareLen = 4

// entry is one item of the journal: a notification for every handler, a
// resync notification for some handlers only, or the sync marker.
type entry struct {
	n Notification
	// to, when not nil, narrows the entry: to the handlers of a resync
	// round, or to nobody for the sync marker (see recipients).
	to *recipients
}

// recipients narrows an entry to some handlers: those in due, for a resync
// notification, or none, for the sync marker, which is not a notification
// but a point in the stream.
type recipients struct {
	due    map[*Registration]bool
	marker bool
}

// isFor reports whether e is a notification meant for r: everything is,
// except a resync notification of a round in which r was not due, and the
// sync marker.
func (e *entry) isFor(r *Registration) bool {
	return e.to == nil || e.to.due[r]
}

// isMarker reports whether e is the sync marker.
func (e *entry) isMarker() bool { return e.to != nil && e.to.marker }

// page is a fixed-size block of entries, linked to the next one.
//
// The writer fills entries in order and publishes them by raising written;
// a reader reads only entries below the written count it loaded. The atomic
// store and load order the two, so an entry is never read while it is being
// written, and a published entry does not change until the page is reused.
//
// refs counts who still needs the page: each reader that has not moved past
// it yet, and the writer while the page is the tail. The one that drops it
// to zero empties the page and hands it back to the journal.
type page struct {
	entries [pageLen]entry
	written atomic.Int32
	next    atomic.Pointer[page]
	refs    atomic.Int32
	seq     atomic.Uint64 // the page's place in the journal, for Stats
}

// journal is the stream of notifications that every handler reads: one
// append-only list of pages, shared, and one cursor per handler.
//
// Why one journal rather than a buffer per handler: distributing a
// notification costs one append whatever the number of handlers, instead of
// an allocation plus a locked append and a wake-up check per handler, and a
// handler reads the notifications by value, in order, from memory that is
// reused as soon as every handler is done with it. A handler's backlog is
// the part of the journal between its cursor and the tail. A slow handler
// never holds up the writer or the other handlers: it only keeps more pages
// alive, and gives each back as soon as it has read it, so the memory a
// burst took is returned while the slowest handler drains it
// (kubernetes#122067 is client-go's buffer that never shrinks).
//
// Appends take wmu, which only the writer (in practice one goroutine, the
// informer's) uses, so it costs an uncontended lock. The rare operations,
// a new page and a handler joining or leaving, take mu, so that a new
// page's reference count and the set of readers agree; readers take no
// lock to read.
type journal struct {
	tail atomic.Pointer[page]
	// plain counts the entries appended for every handler (not resync
	// notifications, not markers), for the handlers' Pending.
	plain atomic.Uint64

	wmu     sync.Mutex // serialises appends
	mu      sync.Mutex // guards readers, spare and page creation; taken after wmu
	readers int32      // cursors in the journal: handlers that joined and have not left
	spare   []*page    // emptied pages, at most spareLen
	// overflow takes the emptied pages beyond spareLen: reused while the
	// load lasts, released by the garbage collector once it is over.
	overflow sync.Pool
	// allocated counts the pages ever allocated, the first one included:
	// how often reuse failed, which the tests check.
	allocated int
}

func newJournal() *journal {
	j := &journal{allocated: 1}
	t := new(page)
	t.refs.Store(1) // the writer's
	j.tail.Store(t)
	return j
}

// append adds e at the end of the journal and publishes it.
func (j *journal) append(e entry) {
	j.wmu.Lock()
	j.appendLocked(e)
	j.wmu.Unlock()
}

// appendLocked is append with wmu held.
func (j *journal) appendLocked(e entry) {
	t := j.tail.Load()
	w := t.written.Load()
	if w == pageLen {
		t, w = j.grow(t), 0
	}
	t.entries[w] = e
	if e.to == nil {
		j.plain.Add(1)
	}
	t.written.Store(w + 1)
}

// tailFull reports whether the next append starts a new page. wmu must be
// held.
func (j *journal) tailFull() bool { return j.tail.Load().written.Load() == pageLen }

// grow links a new tail after the full page t and returns it. The new page
// is referenced by every reader, all of which will reach it, and by the
// writer, which moves from t to it.
func (j *journal) grow(t *page) *page {
	j.mu.Lock()
	next := j.reuse()
	next.seq.Store(t.seq.Load() + 1)
	next.refs.Store(j.readers + 1)
	// Linked under mu, so that a handler leaving (see leave) finds every
	// page that counted it.
	t.next.Store(next)
	j.tail.Store(next)
	j.mu.Unlock()
	j.release(t) // the writer's reference
	return next
}

// reuse returns a spare page, or a new one. mu must be held.
func (j *journal) reuse() *page {
	if n := len(j.spare); n > 0 {
		p := j.spare[n-1]
		j.spare[n-1] = nil
		j.spare = j.spare[:n-1]
		return p
	}
	if p, ok := j.overflow.Get().(*page); ok {
		return p
	}
	j.allocated++
	return new(page)
}

// release drops one reference to p. The last one empties the page, so that
// it keeps no object alive, and keeps it as a spare or puts it in the
// overflow pool (see spareLen).
func (j *journal) release(p *page) {
	if p.refs.Add(-1) != 0 {
		return
	}
	clear(p.entries[:])
	p.written.Store(0)
	p.next.Store(nil)
	j.mu.Lock()
	if len(j.spare) < spareLen {
		j.spare = append(j.spare, p)
		p = nil
	}
	j.mu.Unlock()
	if p != nil {
		j.overflow.Put(p)
	}
}

// join returns a cursor at the end of the journal, where a handler joining
// now starts reading, and the plain count at that point. From then on the
// cursor has a claim on its page and on every page appended after it, until
// it detaches or leaves.
func (j *journal) join() (cursor, uint64) {
	j.wmu.Lock() // no append in between: the position and the count agree
	defer j.wmu.Unlock()
	var c cursor
	plain := j.joinLocked(&c)
	return c, plain
}

// joinLocked is join with wmu held, writing the cursor in place: under mu,
// which guards the cursor's detached state against a concurrent detach.
func (j *journal) joinLocked(c *cursor) uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	t := j.tail.Load()
	t.refs.Add(1)
	j.readers++
	*c = cursor{page: t, pos: int(t.written.Load())}
	return j.plain.Load()
}

// detach stops c from claiming pages appended from now on, while its
// goroutine may still be reading (a removed handler finishing a slow Handle
// call): without it, a handler stuck in Handle after Remove would keep
// every later page alive. The goroutine must stop reading entries before
// the cursor reaches a page past its claims (Registration.stopping is
// checked before every entry, and is true before detach is called); it
// gives back its claims with leave when it exits.
func (j *journal) detach(c *cursor) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.detachLocked(c)
}

// detachLocked is detach with mu held; a second call does nothing.
func (j *journal) detachLocked(c *cursor) {
	if c.detached {
		return
	}
	c.detached = true
	c.lastClaim = j.tail.Load().seq.Load()
	j.readers--
}

// leave gives back every claim c still holds: its own page and the later
// ones, up to the tail or, for a detached cursor, up to the last page
// appended before it detached. The cursor must not be used again. It is
// called by the cursor's goroutine when it exits, or by whoever closes a
// registration whose goroutine never ran.
func (j *journal) leave(c *cursor) {
	if c.page == nil {
		return
	}
	j.mu.Lock()
	j.detachLocked(c)
	var claimed []*page
	for p := c.page; p != nil && p.seq.Load() <= c.lastClaim; p = p.next.Load() {
		claimed = append(claimed, p)
	}
	j.mu.Unlock()
	for _, p := range claimed {
		j.release(p)
	}
	c.page, c.pos = nil, 0
}

// pagesFrom counts the pages from the one numbered seq to the tail, both
// included: what a handler whose cursor is there keeps alive.
func (j *journal) pagesFrom(seq uint64) int {
	return int(j.tail.Load().seq.Load()-seq) + 1
}

// cursor is a handler's position in the journal: the next entry it reads is
// page.entries[pos]. It is owned by the handler's goroutine.
type cursor struct {
	page *page
	pos  int

	// detached and lastClaim are guarded by the journal's mu: detach may
	// be called from another goroutine than the cursor's. Once detached,
	// the cursor claims the pages numbered up to lastClaim only.
	detached  bool
	lastClaim uint64
}

// next returns the published entries from c onwards, at most max of them,
// and moves c past them; moving to a new page gives the old one back to j.
// It returns nil when c has caught up with the writer. The entries are
// valid until the next call: a page is not reused while c is on it.
//
// end, when not 0, is one past the number of the last page c claims (see
// Registration.claimEnd): at the end of that page next returns nil and
// true, and c must leave the journal instead of moving on to a page it
// holds no claim on. It is read after the next page's link, which the
// writer stores after end: so a cursor that sees the next page also sees
// an end that excludes it.
func (c *cursor) next(j *journal, max int, end *atomic.Uint64) (got []entry, last bool) {
	for {
		w := int(c.page.written.Load())
		if c.pos < w {
			stop := min(w, c.pos+max)
			got = c.page.entries[c.pos:stop]
			c.pos = stop
			return got, false
		}
		if c.pos < pageLen {
			return nil, false
		}
		nx := c.page.next.Load()
		if nx == nil {
			return nil, false
		}
		if e := end.Load(); e != 0 && c.page.seq.Load()+1 >= e {
			return nil, true
		}
		old := c.page
		c.page, c.pos = nx, 0
		j.release(old)
	}
}

// ready reports whether an entry is published past c.
func (c *cursor) ready() bool {
	if c.pos < int(c.page.written.Load()) {
		return true
	}
	return c.pos == pageLen && c.page.next.Load() != nil
}
