package processor

import (
	"context"
	"slices"
)

// Bounding a slow handler's backlog.
//
// A handler reads the journal while it keeps up. Once it is more than its
// limit behind, the writer switches it to a backlog of its own that holds
// at most one notification per key (see backlog):
//
//  1. At the next page boundary the writer sees that the handler's Pending
//     is past its limit. It detaches the handler's cursor, which then
//     claims no page beyond the full tail (claimEnd), and lists the handler
//     in Processor.coalescing: from the next notification on, everything
//     meant for the handler is pushed to its backlog as well as appended to
//     the journal for the others.
//  2. The handler's goroutine reads the journal up to the end of its last
//     claimed page, unmerged, giving each page back as it goes, then leaves
//     the journal.
//  3. It delivers its backlog, front first, while the writer keeps merging
//     into it.
//  4. When it finds the backlog empty, it joins the journal again at its
//     end, under the writer's lock, so that no notification falls between
//     the two.
//
// So a handler stuck for good keeps at most its limit (plus a page or two)
// of notifications in the journal, and one per key in its backlog; one that
// catches up returns to the journal, where distributing costs nothing per
// handler. The switch is checked once per page, which costs the writer a
// look at each handler every 128 notifications.

// boundBacklogs switches the handlers that are more than their limit behind
// to their backlogs. wmu must be held, and the tail page be full: a cursor
// detached now reads to the end of that page and no further.
func (p *Processor) boundBacklogs() {
	for _, r := range *p.regs.Load() {
		if r.limit == 0 || r.claimEnd.Load() != 0 || r.closed.Load() {
			continue
		}
		if r.pending(r.delivered.Load()) <= uint64(r.limit) {
			continue
		}
		p.j.detach(&r.cur)
		// Stored before the next page is linked: see cursor.next.
		r.claimEnd.Store(p.j.tail.Load().seq.Load() + 1)
		p.coalescing = append(p.coalescing, r)
	}
}

// pushBacklog gives e to r's backlog if it is meant for r. wmu must be held.
func (r *Registration) pushBacklog(e *entry) {
	switch {
	case e.isMarker():
		r.bl.pushMarker()
	case e.isFor(r):
		if c := r.bl.push(e.n); c > 0 {
			r.coalesced.Add(c)
		}
	}
}

// leaveJournal gives back the cursor's last claimed page once the goroutine
// has read it: from now on the handler reads its backlog.
func (r *Registration) leaveJournal() {
	r.p.j.leave(&r.cur)
	r.offJournal.Store(true)
}

// drainBacklog delivers the backlog until it is empty and the handler has
// joined the journal again. It reports false if the goroutine must exit.
func (r *Registration) drainBacklog(ctx context.Context) bool {
	clock := r.p.watch.read()
	for i := 0; ; i++ {
		if r.stopping(ctx) {
			return false
		}
		if i%batchLen == 0 {
			r.raiseMaxPending(int64(r.pending(r.delivered.Load())))
		}
		nd := r.bl.pop()
		switch {
		case nd == nil:
			if r.rejoin() {
				return true
			}
			// A notification arrived since the pop: deliver it first.
		case nd.marker:
			r.reachedMarker()
		default:
			clock = r.deliver(nd.n, clock)
		}
	}
}

// rejoin puts the cursor back at the end of the journal and takes r off the
// writer's list of coalescing handlers, if the backlog is still empty: both
// under wmu, so that every later notification is in the journal and every
// earlier one was in the backlog. It reports whether it did.
func (r *Registration) rejoin() bool {
	j := r.p.j
	j.wmu.Lock()
	defer j.wmu.Unlock()
	if r.bl.len() > 0 {
		return false
	}
	r.p.coalescing = slices.DeleteFunc(r.p.coalescing, func(x *Registration) bool { return x == r })
	j.joinLocked(&r.cur)
	r.atSeq.Store(r.cur.page.seq.Load())
	r.offJournal.Store(false)
	r.claimEnd.Store(0)
	return true
}

// closeBacklog marks r closed and drops its backlog: nobody will deliver it.
// Under wmu, so that the writer, which skips closed handlers, never lists
// r as coalescing again.
func (p *Processor) closeBacklog(r *Registration) {
	p.j.wmu.Lock()
	r.closed.Store(true)
	p.coalescing = slices.DeleteFunc(p.coalescing, func(x *Registration) bool { return x == r })
	p.j.wmu.Unlock()
	if r.bl != nil {
		r.bl.reset()
	}
}
