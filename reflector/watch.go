package reflector

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// stepWatch is the step of Watching: open a watch from the last
// resourceVersion (or take over the one WatchList left open), apply its
// events to the store until it ends, and decide what the end means.
func (r *Reflector) stepWatch(ctx context.Context) (reaction, error) {
	w, hold := r.m.watch, false
	r.m.watch = nil
	if w == nil {
		rv := r.m.lastSyncRV
		timeout := watchTimeoutSeconds(r.opts.MinWatchTimeout, r.opts.Rand.Float64())
		var err error
		w, err = r.openWatch(ctx, metav1.ListOptions{
			ResourceVersion: rv,
			TimeoutSeconds:  &timeout,
			// Bookmarks let the server tell an idle watch how far it has
			// got, so a restart resumes from a recent resourceVersion
			// instead of one that may have been compacted. They also feed
			// the watchdog: a watch with bookmarks is never silent long.
			AllowWatchBookmarks: true,
		})
		if err != nil {
			return r.watchEnded(ctx, err)
		}
		hold = holdsResourceVersion(rv)
	}
	defer w.Stop()
	start := r.opts.Clock.Now()
	err := r.consume(ctx, w, hold)
	return r.watchEnded(ctx, watchEndCause(err, r.opts.Clock.Now().Sub(start)))
}

// openWatch makes one Watch call.
func (r *Reflector) openWatch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := r.lw.Watch(ctx, opts)
	if err == nil && (w == nil || isNilPointer(w)) {
		err = fmt.Errorf("%w: ListerWatcher returned a nil watch", ErrDecode)
	}
	if err != nil {
		return nil, err
	}
	r.pub.update(func(p *published) { p.watches++ })
	return w, nil
}

// watchEnded reports why a watch ended (nil: normally) and decides what
// follows.
func (r *Reflector) watchEnded(ctx context.Context, err error) (reaction, error) {
	if ctx.Err() != nil {
		return stop, nil
	}
	if err == nil {
		return resumable(afterWatchEnd(KindOther, true), r.m.lastSyncRV), nil
	}
	e := r.report(opWatch, classifyKind, err)
	return resumable(afterWatchEnd(e.Kind, false), r.m.lastSyncRV), e
}

// consume applies w's events to the store until the stream ends, a
// terminal event arrives, the watchdog fires or ctx is done. It returns
// why it stopped (nil for a normal close).
//
// hold is true for a watch started at "" or "0", whose synthetic ADDED
// events must not advance the resourceVersion (see holdsResourceVersion).
func (r *Reflector) consume(ctx context.Context, w watch.Interface, hold bool) error {
	dog := newQuietAlarm(r.opts.Clock, r.opts.stuckWatchLimit(), r.ring)
	defer dog.stop()
	// A tick that came due before the store had a snapshot (the alarm
	// then rang for nobody) is served now.
	r.serveResync()
	burst := 0 // events taken by the fast path since it last served the timers or waited
	for {
		// The fast path: while events keep coming, take the next one with
		// a receive on the result channel alone. A select locks every
		// channel it waits on, a visible share of the cost of an event on
		// a busy watch. Every maxBurst events the loop serves the timers
		// that fired, so the resync tick and the watchdog are never
		// starved; ctx is polled on every event.
		if burst == maxBurst {
			burst = 0
			if err := r.serveDue(dog); err != nil {
				return err
			}
		}
		if !isDone(ctx) {
			if ev, ok, got := tryReceive(w.ResultChan()); got {
				burst++
				if over, err := r.received(ev, ok, w, dog, &hold); over {
					return err
				}
				continue
			}
		}
		// Nothing ready: sleep until something is. (A timer that fired
		// meanwhile has rung the alarm, so the select serves it at once.)
		burst = 0
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-r.alarm:
			if err := r.serveDue(dog); err != nil {
				return err
			}
		case ev, ok := <-w.ResultChan():
			if over, err := r.received(ev, ok, w, dog, &hold); over {
				return err
			}
		}
	}
}

// received handles what a receive from w's result channel gave, on either
// path of consume: the end of the stream (over, and why: nil for a normal
// close), or an event, which the watchdog hears of and the store is given
// (over if it was an ERROR event).
func (r *Reflector) received(ev watch.Event, ok bool, w watch.Interface, dog *quietTimer, hold *bool) (over bool, err error) {
	if !ok {
		return true, streamEnd(w)
	}
	dog.note()
	err = r.handleEvent(ev, hold)
	return err != nil, err
}

// serveDue serves the timers that fired: a resync tick, and the watchdog,
// whose firing ends the watch (with an error) if it really was silent for
// too long, and otherwise re-arms it.
func (r *Reflector) serveDue(dog *quietTimer) error {
	r.serveResync()
	if dog.due() && dog.expired() {
		return fmt.Errorf("%w: nothing for %v, bookmarks expected every %v",
			ErrStuckWatch, dog.silence(), r.opts.BookmarkInterval)
	}
	return nil
}

// maxBurst is how many events consume takes through its fast path before
// it serves the timers that fired. A due resync therefore waits for at most
// that many events, and so does a watchdog tick.
const maxBurst = 64

// tryReceive takes an event from ch if one is ready, without blocking. got
// is false when none was; ok is false when ch is closed.
func tryReceive(ch <-chan watch.Event) (ev watch.Event, ok, got bool) {
	select {
	case ev, ok = <-ch:
		return ev, ok, true
	default:
		return watch.Event{}, false, false
	}
}

// isDone reports whether ctx is done, without blocking: a one-channel
// select, which the runtime answers without taking the channel's lock.
func isDone(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	default:
		return false
	}
}

// streamEnd asks a closed watch why it closed; nil means normally.
func streamEnd(w watch.Interface) error {
	if se, ok := w.(StreamError); ok {
		return se.Err()
	}
	return nil
}

// handleEvent applies one event to the store. It returns an error only for
// an ERROR event, which ends the watch: the server sends one when it can no
// longer serve it (typically 410 Expired). A store error is reported and
// the watch goes on: the event is lost for the store but not for the
// resourceVersion, exactly as in client-go.
func (r *Reflector) handleEvent(ev watch.Event, hold *bool) error {
	if ev.Type == watch.Error {
		r.pub.event(ev.Type, "")
		return eventError(ev.Object)
	}
	m, err := r.admitEvent(ev)
	if err != nil {
		r.pub.event(ev.Type, "")
		r.report(opEvent, KindWrongType, err)
		return nil
	}
	rv := m.GetResourceVersion()
	switch ev.Type {
	case watch.Added:
		err = r.store.Add(ev.Object)
	case watch.Modified:
		*hold, err = false, r.store.Update(ev.Object)
	case watch.Deleted:
		*hold, err = false, r.store.Delete(ev.Object)
	case watch.Bookmark:
		*hold = false
		if rv != "" {
			err = r.store.Bookmark(rv)
		}
	default:
		r.pub.event(ev.Type, "")
		r.report(opEvent, KindDecode, fmt.Errorf("%w: %q", ErrUnknownEvent, ev.Type))
		return nil
	}
	if err != nil {
		r.report(opStore, KindStore, fmt.Errorf("%s: %w", ev.Type, err))
	}
	r.advance(ev.Type, rv, *hold)
	return nil
}

// admitEvent checks an event's object: any object with metadata for a
// BOOKMARK, a named one for the rest.
func (r *Reflector) admitEvent(ev watch.Event) (metav1.Object, error) {
	if ev.Type == watch.Bookmark {
		return r.check.admit(ev.Object)
	}
	return r.check.admitNamed(ev.Object)
}

// eventError turns an ERROR event's object, normally a *metav1.Status, into
// an error. A typed nil is passed on as nil, which apierrors.FromObject
// reports as an unexpected object (KindDecode) instead of dereferencing it.
func eventError(obj runtime.Object) error {
	if isNilPointer(obj) {
		obj = nil
	}
	return apierrors.FromObject(obj)
}

// advance records an event and the progress it carries. An event without a
// resourceVersion leaves the last one in place: resuming from "" would
// replay the whole state.
func (r *Reflector) advance(t watch.EventType, rv string, hold bool) {
	if hold || rv == "" {
		r.pub.event(t, "")
		return
	}
	r.m.lastSyncRV = rv
	r.pub.event(t, rv)
}
