package reflector

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer/internal/objkey"
)

// watch is the I/O of Watching: open a watch from s.rv (or take over the
// stream WatchList left open), apply its events to the store until it
// ends, and say why it ended. It returns s as the events left it.
func (r *Reflector) watch(ctx context.Context, s watching) (state, input) {
	if s.stream == nil {
		timeout := watchTimeoutSeconds(r.opts.MinWatchTimeout, r.opts.Rand.Float64())
		w, err := r.openWatch(ctx, metav1.ListOptions{
			ResourceVersion: s.rv,
			TimeoutSeconds:  &timeout,
			// Bookmarks let the server tell an idle watch how far it has
			// got, so a restart resumes from a recent resourceVersion
			// instead of one that may have been compacted. They also feed
			// the watchdog: a watch with bookmarks is never silent long.
			AllowWatchBookmarks: true,
		})
		if err != nil {
			return s, r.watchEnded(ctx, err)
		}
		s.stream, s.replaying = w, replaysState(s.rv)
	}
	w := s.stream
	s.stream = nil
	defer w.Stop()
	start := time.Now()
	err := r.consume(ctx, w, &s)
	return s, r.watchEnded(ctx, watchEndCause(err, time.Since(start)))
}

// openWatch makes one Watch call.
func (r *Reflector) openWatch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := r.lw.Watch(ctx, opts)
	if err == nil && objkey.IsNil(w) {
		err = fmt.Errorf("%w: ListerWatcher returned a nil watch", ErrDecode)
	}
	if err != nil {
		return nil, err
	}
	r.pub.update(func(p *published) { p.watches++ })
	return w, nil
}

// watchEnded reports why a watch ended (nil: normally).
func (r *Reflector) watchEnded(ctx context.Context, err error) input {
	if ctx.Err() != nil {
		return ctxDone{}
	}
	if err == nil {
		return watchClosed{}
	}
	if rf, ok := err.(*resyncFailed); ok {
		return storeFailed{faultFrom(rf.e)} // reported when it happened
	}
	return watchFailed{r.fail(opWatch, classifyKind, err)}
}

// consume applies w's events to the store until the stream ends, a
// terminal event arrives, the watchdog fires or ctx is done, moving s.rv
// with their progress. It returns why it stopped (nil for a normal close).
//
// The loop below is the whole of it: one select that waits for an event,
// a timer (resync, watchdog) or the end. drainReady, its one hook, takes
// the events that are already waiting without the select (see
// receive_fast.go).
func (r *Reflector) consume(ctx context.Context, w watch.Interface, s *watching) error {
	dog := newQuietAlarm(r.opts.stuckWatchLimit(), r.ring)
	defer dog.stop()
	// A tick that came due before the store had a snapshot (the alarm
	// then rang for nobody) is served now.
	if rf := r.serveResync(); rf != nil {
		return rf
	}
	for {
		if over, err := r.drainReady(ctx, w, dog, s); over {
			return err
		}
		// Wait until something happens. (A timer that fired meanwhile has
		// rung the alarm, so the select serves it at once.)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-r.alarm:
			if err := r.serveDue(dog); err != nil {
				return err
			}
		case ev, ok := <-w.ResultChan():
			if over, err := r.received(ev, ok, w, dog, s); over {
				return err
			}
		}
	}
}

// received handles what a receive from w's result channel gave: the end of
// the stream (over, and why: nil for a normal close), or an event, which
// the watchdog hears of and the store is given (over if it was an ERROR
// event).
func (r *Reflector) received(ev watch.Event, ok bool, w watch.Interface, dog *quietTimer, s *watching) (over bool, err error) {
	if !ok {
		return true, streamEnd(w)
	}
	dog.note()
	err = r.handleEvent(ev, s)
	return err != nil, err
}

// serveDue serves the timers that fired: a resync tick, whose failure ends
// the watch, and the watchdog, whose firing ends the watch (with an error)
// if it really was silent for too long, and otherwise re-arms it.
func (r *Reflector) serveDue(dog *quietTimer) error {
	if rf := r.serveResync(); rf != nil {
		return rf
	}
	if dog.due() && dog.expired() {
		return fmt.Errorf("%w: nothing for %v, bookmarks expected every %v",
			errStuckWatch, dog.silence(), r.opts.BookmarkInterval)
	}
	return nil
}

// streamEnd asks a closed watch why it closed; nil means normally.
func streamEnd(w watch.Interface) error {
	if se, ok := w.(streamError); ok {
		return se.Err()
	}
	return nil
}

// handleEvent applies one event to the store. It returns an error, which
// ends the watch, for an ERROR event (the server sends one when it can no
// longer serve the watch: typically 410 Expired) and for an event older
// than the watch's position (wentBack), which it neither stores nor
// records. A store error is reported and the watch goes on: the event is
// lost for the store but not for the resourceVersion, exactly as in
// client-go.
func (r *Reflector) handleEvent(ev watch.Event, s *watching) error {
	if ev.Type == watch.Error {
		r.pub.event(ev.Type, "")
		return eventError(ev.Object)
	}
	m, err := r.admitEvent(ev)
	if err != nil {
		r.pub.event(ev.Type, "")
		r.report(opEvent, classifyKind, err)
		return nil
	}
	rv := m.GetResourceVersion()
	if !s.replaying && wentBack(s.rv, rv) {
		// Storing it would tell handlers an older state as an update, and
		// the next watch would resume from the older position. Only a
		// snapshot says what the server holds now: the watch ends, and the
		// transition table relists from s.rv, the last good position.
		r.pub.event(ev.Type, "")
		return fmt.Errorf("%w: %s %s/%s at %s, after the watch reached %s",
			errRVBackwards, ev.Type, m.GetNamespace(), m.GetName(), rv, s.rv)
	}
	switch ev.Type {
	case watch.Added:
		err = r.store.Add(ev.Object)
	case watch.Modified:
		s.replaying, err = false, r.store.Update(ev.Object)
	case watch.Deleted:
		s.replaying, err = false, r.store.Delete(ev.Object)
	case watch.Bookmark:
		s.replaying = false
		if rv != "" {
			err = r.store.Bookmark(rv)
		}
	default:
		r.pub.event(ev.Type, "")
		r.report(opEvent, KindDecode, fmt.Errorf("%w: %q", errUnknownEvent, ev.Type))
		return nil
	}
	if err != nil {
		r.report(opStore, KindStore, fmt.Errorf("%s: %w", ev.Type, err))
	}
	r.advance(ev.Type, rv, s)
	return nil
}

// admitEvent checks an event's object: any object with metadata for a
// BOOKMARK (it carries only a resourceVersion), admitObject for the rest.
func (r *Reflector) admitEvent(ev watch.Event) (metav1.Object, error) {
	if ev.Type == watch.Bookmark {
		return r.check.admit(ev.Object)
	}
	return r.admitObject(ev.Object)
}

// eventError turns an ERROR event's object, normally a *metav1.Status, into
// an error. A typed nil is passed on as nil, which apierrors.FromObject
// reports as an unexpected object (KindDecode) instead of dereferencing it.
func eventError(obj runtime.Object) error {
	if objkey.IsNil(obj) {
		obj = nil
	}
	return apierrors.FromObject(obj)
}

// advance records an event and the progress it carries. An event without a
// resourceVersion leaves the last one in place: resuming from "" would
// replay the whole state.
func (r *Reflector) advance(t watch.EventType, rv string, s *watching) {
	if s.replaying || rv == "" {
		r.pub.event(t, "")
		return
	}
	s.rv = rv
	r.pub.event(t, rv)
}
