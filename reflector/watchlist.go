package reflector

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// streamSnapshot gets a complete snapshot with WatchList (KEP-3157): a
// watch with sendInitialEvents=true streams the current state as ADDED
// events, then a BOOKMARK annotated k8s.io/initial-events-end: "true" whose
// resourceVersion is the snapshot's. The collected objects replace the
// store's content and the same watch, still open, goes with the stored
// input to Watching.
func (r *Reflector) streamSnapshot(ctx context.Context, s listing) input {
	min := r.opts.MinWatchTimeout
	timeout := watchTimeoutSeconds(min, r.opts.Rand.Float64())
	sendInitial := true
	opts := metav1.ListOptions{
		ResourceVersion:      streamResourceVersion(s.rv, s.consistent),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		SendInitialEvents:    &sendInitial,
		AllowWatchBookmarks:  true,
		TimeoutSeconds:       &timeout,
	}
	w, err := r.openWatch(ctx, opts)
	if err != nil {
		return r.watchListFailure(ctx, err)
	}
	items, rv, err := r.collectInitial(ctx, w, time.Duration(timeout)*time.Second)
	if err != nil {
		w.Stop()
		return r.watchListFailure(ctx, err)
	}
	in := r.replace(items, rv, true)
	st, ok := in.(snapshotStored)
	if !ok {
		w.Stop()
		return in
	}
	st.stream = w
	return st
}

// watchListFailure reports a WatchList failure.
func (r *Reflector) watchListFailure(ctx context.Context, err error) input {
	if ctx.Err() != nil {
		return ctxDone{}
	}
	return watchListFailed{r.fail(opWatchList, classifyKind, err)}
}

// collectInitial consumes the initial events until the initial-events-end
// bookmark, and returns the objects and the bookmark's resourceVersion.
//
// The wait is bounded twice, so that a server that never sends the bookmark
// (an old server, or a fake that ignores sendInitialEvents: client-go hangs
// on those) cannot hold the reflector: the stream may not fall silent for
// WatchListTimeout, and the whole wait may not exceed the watch's own
// timeout, whether or not the server enforces it.
func (r *Reflector) collectInitial(ctx context.Context, w watch.Interface, total time.Duration) ([]runtime.Object, string, error) {
	idle := newQuietAlarm(r.opts.WatchListTimeout, r.ring)
	defer idle.stop()
	deadline := time.NewTimer(total)
	defer deadline.Stop()
	var set initialSet
	for {
		select {
		case <-ctx.Done():
			return nil, "", ctx.Err()
		case <-r.alarm:
			// A resync tick that rang stays due; the watch that follows
			// serves it.
			if idle.due() && idle.expired() {
				return nil, "", fmt.Errorf("%w: stream silent for %v", errWatchListTimeout, idle.silence())
			}
		case <-deadline.C:
			return nil, "", fmt.Errorf("%w: none within the watch timeout %v", errWatchListTimeout, total)
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil, "", closedBeforeBookmark(w)
			}
			idle.note()
			rv, done, err := r.collectEvent(&set, ev)
			if err != nil || done {
				return set.list(), rv, err
			}
		}
	}
}

// closedBeforeBookmark explains a stream that ended before its bookmark.
func closedBeforeBookmark(w watch.Interface) error {
	if se, ok := w.(streamError); ok {
		if err := se.Err(); err != nil {
			return err
		}
	}
	return errWatchListClosed
}

// collectEvent folds one initial event into set. done reports the
// initial-events-end bookmark, whose resourceVersion is rv.
func (r *Reflector) collectEvent(set *initialSet, ev watch.Event) (rv string, done bool, err error) {
	if ev.Type == watch.Error {
		r.pub.event(ev.Type, "")
		return "", false, eventError(ev.Object)
	}
	// Each initial event stands for one object of the snapshot, so a
	// snapshot's cap is a cap on them: a server repeating one object, or
	// sending objects that are refused, gets no further than a list would.
	if err := roomFor(set.events, r.opts.listLimits()); err != nil {
		r.pub.event(ev.Type, "")
		return "", false, err
	}
	set.events++
	m, err := r.admitEvent(ev)
	if err != nil {
		r.pub.event(ev.Type, "")
		r.report(opEvent, classifyKind, err)
		return "", false, nil
	}
	// No progress is published before the bookmark: the store does not
	// hold these objects yet.
	r.pub.event(ev.Type, "")
	switch ev.Type {
	case watch.Added, watch.Modified:
		set.put(m, ev.Object)
	case watch.Deleted:
		set.remove(m)
	case watch.Bookmark:
		if m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
			return m.GetResourceVersion(), true, nil
		}
	default:
		r.report(opEvent, KindDecode, fmt.Errorf("%w: %q", errUnknownEvent, ev.Type))
	}
	return "", false, nil
}

// initialSet accumulates a WatchList's initial state, one entry per
// object, in arrival order.
//
// Every event is folded by key: an object sent twice (a conforming server
// never does, a broken one may send the same object for ever) takes one
// entry, its latest state, so the set is bounded by the objects that exist,
// not by the events a server cares to send. events counts the initial
// events seen, folded in or refused, which roomFor caps.
//
// Not safe for concurrent use.
type initialSet struct {
	items  []runtime.Object // nil entries are deleted objects
	index  map[string]int   // key -> position in items
	events int              // initial events seen so far
}

// put records the latest state of an object (ADDED or MODIFIED),
// replacing an earlier one.
func (s *initialSet) put(m metav1.Object, obj runtime.Object) {
	if s.index == nil {
		s.index = map[string]int{}
	}
	key := objectKey(m)
	if i, ok := s.index[key]; ok {
		s.items[i] = obj
		return
	}
	s.index[key] = len(s.items)
	s.items = append(s.items, obj)
}

// remove forgets an object.
func (s *initialSet) remove(m metav1.Object) {
	key := objectKey(m)
	if i, ok := s.index[key]; ok {
		s.items[i] = nil
		delete(s.index, key)
	}
}

// list returns the collected objects, deleted ones removed.
func (s *initialSet) list() []runtime.Object {
	if len(s.index) == len(s.items) {
		return s.items
	}
	out := s.items[:0]
	for _, obj := range s.items {
		if obj != nil {
			out = append(out, obj)
		}
	}
	return out
}
