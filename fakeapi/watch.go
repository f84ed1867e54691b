package fakeapi

import (
	"context"
	"errors"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/watch"
)

// watchBatchSize is how many events a watch takes from the log per lock.
const watchBatchSize = 256

// watchPlan says where a watch starts, from its options.
type watchPlan struct {
	// initial: replay the current state as ADDED events first.
	initial bool
	// endBookmark: after the replay, send the initial-events-end bookmark.
	endBookmark bool
	// fromNow: no replay, start at the current RV.
	fromNow bool
	// fromRV: no replay, start after this RV (when !initial && !fromNow).
	fromRV uint64
	// notOlderThan: the replayed state must be at least this recent.
	notOlderThan uint64
}

// planWatch applies the real server's rules:
//
//	sendInitialEvents=true   replay the state (not older than RV), then,
//	                         with allowWatchBookmarks, the end bookmark
//	sendInitialEvents=false  no replay: from RV, or from now for ""/"0"
//	unset, RV "" or "0"      replay the state, then, with allowWatchBookmarks,
//	                         the end bookmark (see below)
//	unset, RV N              events after N
//
// The third line is the legacy watch, which kube-apiserver (with the
// WatchList feature, on by default since 1.32) rewrites into a WatchList
// before serving it: sendInitialEvents=true, resourceVersionMatch=
// NotOlderThan. So a client that allows bookmarks learns where the replay
// ends, whichever form it used.
func planWatch(opts metainternalversion.ListOptions) (watchPlan, error) {
	rv, err := parseRV(opts.ResourceVersion)
	if err != nil {
		return watchPlan{}, err
	}
	unsetOrZero := opts.ResourceVersion == "" || opts.ResourceVersion == "0"
	switch {
	case opts.SendInitialEvents != nil && *opts.SendInitialEvents:
		return watchPlan{initial: true, endBookmark: opts.AllowWatchBookmarks, notOlderThan: rv}, nil
	case opts.SendInitialEvents != nil && unsetOrZero:
		return watchPlan{fromNow: true}, nil
	case opts.SendInitialEvents == nil && unsetOrZero:
		return watchPlan{initial: true, endBookmark: opts.AllowWatchBookmarks}, nil
	}
	return watchPlan{fromRV: rv}, nil
}

// serveWatch answers GET on a collection with watch=true. Errors found
// before streaming starts (bad options, 406) are plain HTTP errors; errors
// about the requested resourceVersion come, as on the real server, as an
// ERROR event inside a 200 stream.
func (s *Server) serveWatch(w http.ResponseWriter, r *http.Request, req requestInfo) {
	opts, err := parseListOptions(r, req)
	var plan watchPlan
	if err == nil {
		plan, err = planWatch(opts)
	}
	var enc encoding
	if err == nil {
		enc, err = s.negotiateResource(r, req)
	}
	if err == nil && enc.info.StreamSerializer == nil {
		// YAML cannot be framed into a stream; like the real server, we do
		// not fall back to the client's next media range.
		err = notAcceptableStream()
	}
	flusher, canFlush := w.(http.Flusher)
	if err == nil && !canFlush {
		err = apierrors.NewInternalError(errors.New("fakeapi: response writer cannot stream"))
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if enc.as == asPartialList {
		enc.as = asPartial
	}
	ws := newWatchStream(s, w, flusher, enc, req, opts)
	defer s.open.add(ws)()
	// Held frames go out however the watch ends, in start (a 410 ERROR
	// when the resourceVersion is too old) or in stream.
	defer ws.endHold()
	ctx := r.Context()
	if opts.TimeoutSeconds != nil && *opts.TimeoutSeconds > 0 {
		timeout := time.Duration(*opts.TimeoutSeconds) * time.Second
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
		ws.lastBookmarkAt = timeout - bookmarkBeforeTimeout
	}
	page, err := ws.position(plan)
	ws.writeHeader()
	// A stall holds the initial events (or the ERROR) too; the position is
	// taken, so nothing written meanwhile is lost.
	if !ws.waitWhileStalled(ctx) || !ws.start(plan, page, err) {
		return
	}
	ws.stream(ctx)
}

// position fixes where the stream starts, under the server's lock: the
// state to replay, or the resourceVersion after which events are sent. It
// runs before the response header goes out, so that a client that has
// seen the 200 can count on every later write reaching it, as on the real
// server, which opens its storage watch before answering. An error about
// the resourceVersion is returned for start to send as an ERROR event.
func (ws *watchStream) position(plan watchPlan) (listPage, error) {
	s := ws.s
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case plan.initial:
		page, err := s.store.list(listQuery{res: ws.res, namespace: ws.filter.namespace,
			notOlderThan: plan.notOlderThan, match: ws.filter.selectorMatch()})
		ws.cursor = page.rv
		return page, err
	case plan.fromNow:
		ws.cursor = s.store.rv
	default:
		ws.cursor = plan.fromRV
		if !s.store.log.available(plan.fromRV) {
			return listPage{}, watchTooOld(plan.fromRV, s.store.log.compacted)
		}
	}
	return listPage{}, nil
}

// start sends what position found: the initial events (and the bookmark
// that ends them), or the ERROR event. It reports false when the stream is
// over (an ERROR event was sent or the client went away).
func (ws *watchStream) start(plan watchPlan, page listPage, err error) bool {
	if err != nil {
		ws.sendError(err)
		return false
	}
	defer ws.alloc.pooled()()
	for i, obj := range page.items {
		if !ws.send(watch.Added, obj, true) {
			return false
		}
		if i%watchBatchSize == watchBatchSize-1 {
			ws.flush()
		}
	}
	if plan.endBookmark && !ws.sendBookmark(true) {
		return false
	}
	ws.flush()
	return true
}

// bookmarkBeforeTimeout is how long before a watch's timeoutSeconds the
// real watch cache sends it a bookmark, so that the client's next watch
// resumes from as recent a resourceVersion as possible.
const bookmarkBeforeTimeout = 2 * time.Second

// stream sends events until the client leaves, the timeout passes, the
// watches are dropped or the server closes.
//
// A watch that allows bookmarks gets one every Options.BookmarkInterval,
// and, as from the real watch cache, one 2s before its timeoutSeconds run
// out, if by then the resourceVersion has moved past the one the watch
// started from: the real server never sends a bookmark that would not move
// the client forward.
func (ws *watchStream) stream(ctx context.Context) {
	s := ws.s
	startRV := ws.cursor
	tick, last, stop := ws.bookmarkClocks()
	defer stop()
	for {
		if !ws.waitWhileStalled(ctx) || !ws.holdOrRelease(ctx) {
			return
		}
		s.mu.Lock()
		batch, err := s.store.eventsAfter(ws.res, ws.cursor, watchBatchSize)
		changed := s.changed
		compacted := s.store.log.compacted
		s.mu.Unlock()
		if err != nil {
			// The watcher fell behind the compaction window; the real
			// watch cache ends such a watch the same way.
			ws.sendError(watchTooOld(ws.cursor, compacted))
			return
		}
		for _, ev := range batch.events {
			if typ, fromPrev, ok := ws.translate(ev); ok && !ws.sendLogged(ev, typ, fromPrev) {
				return
			}
		}
		ws.cursor = batch.next
		if len(batch.events) == watchBatchSize {
			continue // more is waiting; flush once caught up
		}
		ws.flush()
		select {
		case <-changed:
		case <-ws.holding: // nil, never ready, unless held
		case <-tick:
			// A bookmark that falls due during a stall waits for its end.
			if !ws.waitWhileStalled(ctx) || !ws.sendBookmark(false) {
				return
			}
			ws.flush()
		case <-last:
			last = nil
			if !ws.waitWhileStalled(ctx) || (ws.cursor > startRV && !ws.sendBookmark(false)) {
				return
			}
			ws.flush()
		case <-ctx.Done():
			return
		case <-ws.dropped:
			return
		case <-s.closed:
			return
		}
	}
}

// bookmarkClocks returns the channels that say when a bookmark is due:
// every BookmarkInterval, and once before the timeout. Both are nil (never
// ready) for a watch that does not allow bookmarks. stop releases the
// timers.
func (ws *watchStream) bookmarkClocks() (tick, last <-chan time.Time, stop func()) {
	if !ws.bookmarks {
		return nil, nil, func() {}
	}
	t := time.NewTicker(ws.s.opts.BookmarkInterval)
	if ws.lastBookmarkAt <= 0 {
		return t.C, nil, t.Stop
	}
	lt := time.NewTimer(ws.lastBookmarkAt)
	return t.C, lt.C, func() { t.Stop(); lt.Stop() }
}

// waitWhileStalled blocks while a stall fault holds this resource's
// watches. It reports false if the watch should end meanwhile.
func (ws *watchStream) waitWhileStalled(ctx context.Context) bool {
	for {
		released, left, ok := ws.s.faults.stall(ws.res.gvr.Resource)
		if !ok {
			return true
		}
		if !ws.waitStall(ctx, released, left) {
			return false
		}
	}
}

// waitStall waits for one stall to end: released closes, or left passes
// (when positive). It reports false if the watch should end meanwhile.
func (ws *watchStream) waitStall(ctx context.Context, released <-chan struct{}, left time.Duration) bool {
	var deadline <-chan time.Time
	if left > 0 {
		t := time.NewTimer(left)
		defer t.Stop()
		deadline = t.C
	}
	select {
	case <-released:
	case <-deadline:
	case <-ctx.Done():
		return false
	case <-ws.dropped:
		return false
	case <-ws.s.closed:
		return false
	}
	return true
}

// translate turns a logged write into what this watch must see. With
// selectors an object can enter or leave the watch's view in an update;
// like the real server we then send ADDED, or DELETED carrying the last
// state the watcher could see (fromPrev), stamped with the update's RV.
func (ws *watchStream) translate(ev event) (typ watch.EventType, fromPrev, ok bool) {
	curOK := ev.typ != watch.Deleted && ws.filter.matches(ev.obj)
	prevOK := ev.prev != nil && ws.filter.matches(ev.prev)
	switch {
	case ev.typ == watch.Deleted && prevOK:
		return watch.Deleted, false, true
	case curOK && (prevOK || ev.typ == watch.Added):
		return ev.typ, false, true
	case curOK:
		return watch.Added, false, true
	case prevOK:
		return watch.Deleted, true, true
	}
	return "", false, false
}
