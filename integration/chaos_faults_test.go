package integration

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/reflector"
)

// chaosFault is one fault of the catalogue. inject arms it before a round
// of writes; ok says whether the run's configuration can meet it (some
// faults need paged lists).
type chaosFault struct {
	name   string
	ok     func(cfg chaosConfig) bool
	inject func(r *chaosRun) armed
}

// armed is an injected fault: met tells, from the reflector's stats before
// the fault and now, that the reflector has run into it (the round waits for
// that, so that a fault is never healed before it did anything), and heal
// ends it.
type armed struct {
	met  func(before, now reflector.Stats) bool
	heal func()
}

func always(chaosConfig) bool { return true }

func lists(c chaosConfig) bool { return c.watchList == reflector.WatchListOff }

func nothing() {}

// errorsUp is met once the reflector has reported an error of kind.
func errorsUp(kind reflector.Kind) func(before, now reflector.Stats) bool {
	return func(before, now reflector.Stats) bool { return now.Errors[kind] > before.Errors[kind] }
}

func watchesUp(before, now reflector.Stats) bool { return now.Watches > before.Watches }

func relistsUp(before, now reflector.Stats) bool { return now.Relists > before.Relists }

// forceRelist makes the reflector relist: the server forgets its history
// and drops every watch, and answers the next watch with 410 Gone (a
// reflector that had read everything could otherwise resume from the
// compaction point itself).
func forceRelist(r *chaosRun) {
	r.srv.Compact()
	r.srv.Faults().FailNext(fakeapi.Failure{Verb: "watch", Resource: "pods", Code: 410})
	r.srv.DropWatches()
}

// burst is a fault that fails the next 1 to 3 requests of verb with code,
// met when the reflector reports it as kind.
func burst(verb string, code int, kind reflector.Kind) chaosFault {
	ok := always
	if verb == "list" {
		ok = lists
	}
	return chaosFault{
		name: fmt.Sprintf("%d burst on %s", code, verb),
		ok:   ok,
		inject: func(r *chaosRun) armed {
			r.srv.Faults().FailNext(fakeapi.Failure{Verb: verb, Resource: "pods", Count: 1 + r.rng.IntN(3), Code: code})
			if verb == "list" {
				forceRelist(r)
			} else {
				r.srv.DropWatches()
			}
			return armed{met: errorsUp(kind), heal: nothing}
		},
	}
}

// after is met once d has passed since it was made.
func after(d time.Duration) func(before, now reflector.Stats) bool {
	at := time.Now().Add(d)
	return func(reflector.Stats, reflector.Stats) bool { return time.Now().After(at) }
}

// chaosFaults is every fault fakeapi can inject, and the network ones the
// proxy adds. docs/reliability.md's fault table lists them.
var chaosFaults = []chaosFault{
	{name: "no fault", ok: always, inject: func(*chaosRun) armed {
		return armed{met: func(reflector.Stats, reflector.Stats) bool { return true }, heal: nothing}
	}},
	{name: "dropped watches", ok: always, inject: func(r *chaosRun) armed {
		r.srv.DropWatches()
		return armed{met: watchesUp, heal: nothing}
	}},
	{name: "closed connections", ok: always, inject: func(r *chaosRun) armed {
		r.srv.CloseClientConnections()
		return armed{met: watchesUp, heal: nothing}
	}},
	{name: "watch down, then compaction", ok: always, inject: func(r *chaosRun) armed {
		r.srv.Faults().FailNext(fakeapi.Failure{Verb: "watch", Resource: "pods", Count: 1 << 20, Code: 503})
		r.srv.DropWatches()
		return armed{met: errorsUp(reflector.KindServerError), heal: func() { r.srv.Compact(); r.srv.Faults().Reset() }}
	}},
	{name: "compaction between list pages", ok: func(c chaosConfig) bool { return c.paged() }, inject: func(r *chaosRun) armed {
		// More than one page, even after the round's deletes and moves.
		require.NoError(r.t, r.w.createInScope(3*int(r.cfg.pageSize)))
		r.lw.compactBetweenPages.Store(true)
		forceRelist(r)
		return armed{met: func(reflector.Stats, reflector.Stats) bool { return !r.lw.compactBetweenPages.Load() }, heal: nothing}
	}},
	burst("watch", 429, reflector.KindThrottled),
	burst("watch", 500, reflector.KindServerError),
	burst("list", 429, reflector.KindThrottled),
	burst("list", 500, reflector.KindServerError),
	{name: "stalled watch", ok: always, inject: func(r *chaosRun) armed {
		d := time.Duration(50+r.rng.IntN(400)) * time.Millisecond
		r.srv.Faults().StallWatches("pods", d)
		stuck := errorsUp(reflector.KindStuckWatch)
		over := after(d)
		return armed{met: func(b, n reflector.Stats) bool { return stuck(b, n) || over(b, n) },
			heal: func() { r.srv.Faults().ResumeWatches("pods") }}
	}},
	{name: "cut frame", ok: always, inject: func(r *chaosRun) armed {
		r.srv.Faults().CutNextWatchFrame("pods")
		return armed{met: watchesUp, heal: nothing}
	}},
	{name: "malformed frame", ok: always, inject: func(r *chaosRun) armed {
		r.srv.Faults().MalformNextWatchFrame("pods")
		return armed{met: errorsUp(reflector.KindDecode), heal: nothing}
	}},
	{name: "slow server", ok: always, inject: func(r *chaosRun) armed {
		d := time.Duration(10+r.rng.IntN(90)) * time.Millisecond
		r.srv.Faults().SetLatency("", "pods", d)
		return armed{met: after(3 * d), heal: func() { r.srv.Faults().SetLatency("", "pods", 0) }}
	}},
	{name: "server restart", ok: always, inject: func(r *chaosRun) armed {
		r.proxy.Pause() // down: new connections fail
		r.proxy.DropAll()
		return armed{met: errorsUp(reflector.KindNetwork), heal: r.proxy.Resume} // back on the same port, same history
	}},
	{name: "relist", ok: always, inject: func(r *chaosRun) armed {
		forceRelist(r)
		return armed{met: relistsUp, heal: nothing}
	}},
}

// chaosLW is the ListerWatcher of a chaos run: the HTTP one, plus the one
// fault the server cannot inject by itself, a compaction right after the
// first page of a paged list, so that the continue token has expired.
type chaosLW struct {
	reflector.ListerWatcher
	run                 *chaosRun
	compactBetweenPages atomic.Bool // armed by the fault, disarmed when done
}

func (lw *chaosLW) List(ctx context.Context, opts metav1.ListOptions) (kruntime.Object, error) {
	obj, err := lw.ListerWatcher.List(ctx, opts)
	if l, ok := obj.(*corev1.PodList); ok && err == nil && l.Continue != "" && lw.compactBetweenPages.CompareAndSwap(true, false) {
		lw.run.srv.Compact()
		lw.run.note("compacted between list pages (after the page at rv=%s)", l.ResourceVersion)
	}
	return obj, err
}
