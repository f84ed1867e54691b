package processor

import "sync"

// DefaultBacklogLimit is the number of pending notifications past which a
// handler's backlog coalesces by key (HandlerOptions.BacklogLimit): enough
// for a handler that keeps up to ride out a burst without noticing, few
// enough that a handler stuck for good keeps a few thousand objects alive,
// not every version the watch reports.
const DefaultBacklogLimit = 1024

// backlog is the notifications of one handler that fell more than its limit
// behind, at most one per key (two when a delete waits before a re-creation):
// a key that changes again while it waits joins its pending notification
// instead of queueing again, as deltas do in the queue. Its size is bounded
// by the number of keys, whatever the number of events.
//
// Notifications leave from the front in the order their keys first arrived.
// The sync marker is kept in that order too, as a node with no key: when the
// handler reaches it, everything distributed before MarkSynced has been
// handled, merged into a later version or found to need no call at all.
//
// A backlog is safe for concurrent use: the writer pushes while the
// handler's goroutine pops.
type backlog struct {
	mu    sync.Mutex // guards every field below
	head  *node      // the next notification to deliver
	tail  *node      // the latest pushed
	byKey map[string]*keyNodes
	n     int // nodes in the list
}

// node is one pending notification of the backlog, or the sync marker.
type node struct {
	n          Notification
	marker     bool
	prev, next *node
}

// keyNodes is what the backlog holds for one key: its latest pending
// notification and, when that one is a re-creation, the delete waiting
// before it.
type keyNodes struct {
	deleted *node // a Delete pending before last; nil if none
	last    *node
}

func newBacklog() *backlog { return &backlog{byKey: make(map[string]*keyNodes)} }

// len returns the number of notifications (and marker) waiting.
func (b *backlog) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}

// pushMarker appends the sync marker.
func (b *backlog) pushMarker() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.link(&node{marker: true})
}

// push adds n, merging it into the key's pending notification if there is
// one (see merge, in merge.go), and returns how many notifications the handler will now
// not be called for: 0 when n was queued, 1 when it was merged, 2 when it
// cancelled an Add the handler had not seen yet.
func (b *backlog) push(n Notification) (coalesced uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	kn := b.byKey[n.Key]
	if kn == nil {
		b.byKey[n.Key] = &keyNodes{last: b.link(&node{n: n})}
		return 0
	}
	switch merged, keep := merge(kn.last.n, n); {
	case !keep: // an Add and its Delete: the handler hears of neither
		b.unlink(kn.last)
		kn.last, kn.deleted = kn.deleted, nil
		if kn.last == nil {
			delete(b.byKey, n.Key)
		}
		return 2
	case merged != nil:
		kn.last.n = *merged
		return 1
	default: // a re-creation after a pending Delete: both are news
		kn.deleted, kn.last = kn.last, b.link(&node{n: n})
		return 0
	}
}

// pop removes and returns the front node, or nil if the backlog is empty.
func (b *backlog) pop() *node {
	b.mu.Lock()
	defer b.mu.Unlock()
	nd := b.head
	if nd == nil {
		return nil
	}
	b.unlink(nd)
	if nd.marker {
		return nd
	}
	switch kn := b.byKey[nd.n.Key]; {
	case kn.deleted == nd:
		kn.deleted = nil
	case kn.last == nd:
		delete(b.byKey, nd.n.Key)
	}
	return nd
}

// link appends nd to the list and returns it. mu must be held.
func (b *backlog) link(nd *node) *node {
	nd.prev = b.tail
	if b.tail != nil {
		b.tail.next = nd
	} else {
		b.head = nd
	}
	b.tail = nd
	b.n++
	return nd
}

// unlink removes nd from the list. mu must be held.
func (b *backlog) unlink(nd *node) {
	if nd.prev != nil {
		nd.prev.next = nd.next
	} else {
		b.head = nd.next
	}
	if nd.next != nil {
		nd.next.prev = nd.prev
	} else {
		b.tail = nd.prev
	}
	nd.prev, nd.next = nil, nil
	b.n--
}

// reset empties the backlog, so that a removed handler's keeps nothing
// alive.
func (b *backlog) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.head, b.tail, b.n = nil, nil, 0
	clear(b.byKey)
}
