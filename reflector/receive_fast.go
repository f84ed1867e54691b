package reflector

// Delete this file and its one hook (the call to drainReady in consume),
// and the reflector is still correct, only slower. One script goes with it:
// testdata/busy_watch.txt shows the timers served every maxBurst events,
// which is this file's rule; without it, consume's select serves them as
// soon as they fire.
//
// Why it is faster: consume's select locks every channel it waits on (the
// context's, the alarm, the watch's), a visible share of the cost of an
// event on a busy watch. While events keep coming, drainReady takes each
// with a receive on the result channel alone, and polls the context with a
// one-channel select, which the runtime answers without a lock. Every
// maxBurst events it serves the timers that fired, so that a resync tick
// or the watchdog is never starved by a busy watch; the select would have
// served them itself.

import (
	"context"

	"k8s.io/apimachinery/pkg/watch"
)

// maxBurst is how many events drainReady takes before it serves the timers
// that fired. A due resync therefore waits for at most that many events,
// and so does a watchdog tick.
const maxBurst = 64

// drainReady applies the events already waiting on w, as consume's select
// would, and returns when none is (over false: consume then waits), when
// ctx is done (consume's select sees it), or when the watch is over.
func (r *Reflector) drainReady(ctx context.Context, w watch.Interface, dog *quietTimer, s *watching) (over bool, err error) {
	ch := w.ResultChan()
	for burst := 0; ; burst++ {
		if burst == maxBurst {
			burst = 0
			if err := r.serveDue(dog); err != nil {
				return true, err
			}
		}
		if isDone(ctx) {
			return false, nil
		}
		ev, ok, got := tryReceive(ch)
		if !got {
			return false, nil
		}
		if over, err := r.received(ev, ok, w, dog, s); over {
			return true, err
		}
	}
}

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
