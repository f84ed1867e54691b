package integration

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/reflector"
	"github.com/seed31a95821/informer/rest"
)

// Each scenario injects one fault that fakeapi can produce (or, for a wrong
// object kind, that a wrapper produces), keeps writing through it, and ends
// with the reflector's store equal to the server's state. Every scenario runs
// over JSON and over protobuf.

var encodings = []string{rest.ContentTypeJSON, rest.ContentTypeProtobuf}

func forEachEncoding(t *testing.T, fn func(t *testing.T, contentType string)) {
	for _, ct := range encodings {
		t.Run(ct, func(t *testing.T) {
			// Registered first, so it runs last: after the reflector and
			// the server have been stopped by their own cleanups.
			t.Cleanup(func() { goleak.VerifyNone(t) })
			fn(t, ct)
		})
	}
}

func TestDroppedWatchesResumeWithoutRelist(t *testing.T) {
	forEachEncoding(t, func(t *testing.T, ct string) {
		srv := newServer(t, 50)
		opts := quick()
		// No watchdog: a watch it gave up on may rightly be sent again
		// what it had not read, which requireNothingResent would take for
		// a resume from too far back.
		opts.StuckWatchFactor = -1
		r := startReflector(t, srv, opts, ct, nil)
		c := newChurn(t, srv)
		r.requireConverged(t)
		for range 3 {
			// Each drop hits a watch that has delivered the last round's
			// writes, so its last RV is past the snapshot's.
			watches := r.refl.Stats().Watches
			srv.DropWatches()
			c.writes(t, 20)
			require.Eventually(t, func() bool { return r.refl.Stats().Watches > watches }, converged, 5*time.Millisecond,
				"a dropped watch is replaced")
			r.requireConverged(t)
		}
		require.Zero(t, r.refl.Stats().Relists, "a dropped watch is resumed, not relisted")
		// A dropped watch ends cleanly, so everything sent on it was read:
		// the watch that replaces it must start after all of that.
		requireNothingResent(t, srv, r.store.newestRV(t))
	})
}

func TestCompactionWhileWatchIsDownForcesRelist(t *testing.T) {
	forEachEncoding(t, func(t *testing.T, ct string) {
		srv, r, c := synced(t, 50, ct)

		srv.Faults().FailNext(fakeapi.Failure{Verb: "watch", Resource: "pods", Count: 1 << 20, Code: 503})
		srv.DropWatches()
		r.deleteStored(t, 3) // only a relist that removes them converges
		c.writes(t, 30)
		srv.Compact()
		srv.Faults().Reset()

		// As in TestMalformedFrameIsATypedDecodeError, convergence alone
		// proves nothing if the writes cancel out: wait for the relist.
		require.Eventually(t, func() bool { return r.refl.Stats().Relists > 0 }, converged, 5*time.Millisecond,
			"the compacted history must force a relist")
		r.requireConverged(t)
		require.Positive(t, r.errorsOf(reflector.KindExpired))
	})
}

// Compaction during a watch: harmless while the watch has been sent
// everything (the history it still needs is empty), a 410 and a relist when
// the watch is behind and the events it has yet to send are compacted away.
func TestCompactionDuringOpenWatch(t *testing.T) {
	t.Run("caught-up", func(t *testing.T) {
		forEachEncoding(t, func(t *testing.T, ct string) {
			srv := newServer(t, 20)
			r := startReflector(t, srv, quick(), ct, nil)
			c := newChurn(t, srv)
			c.writes(t, 10)
			r.requireConverged(t)
			srv.Compact()
			c.writes(t, 10)
			r.requireConverged(t)
			require.Zero(t, r.refl.Stats().Relists)
		})
	})
	t.Run("behind", func(t *testing.T) {
		forEachEncoding(t, func(t *testing.T, ct string) {
			srv := newServer(t, 20)
			opts := quick()
			opts.StuckWatchFactor = -1 // keep the stalled watch open: we want it behind, not restarted
			r := startReflector(t, srv, opts, ct, nil)
			c := newChurn(t, srv)
			r.requireConverged(t)
			srv.Faults().StallWatches("pods", 0)
			r.deleteStored(t, 3) // only a relist that removes them converges
			c.writes(t, 20)
			srv.Compact()
			srv.Faults().ResumeWatches("pods")
			r.requireConverged(t)
			require.Positive(t, r.errorsOf(reflector.KindExpired))
			// The relist is counted just after the store has taken it.
			require.Eventually(t, func() bool { return r.refl.Stats().Relists > 0 }, converged, 5*time.Millisecond,
				"the 410 must lead to a relist")
		})
	})
}

// compactAfterFirstPage compacts the server's history right after the first
// page of a paged list, so the continue token has expired when it is used.
// It runs on the reflector's goroutine, which may not stop the test: what
// its writes return is sent on done, for the test to check.
type compactAfterFirstPage struct {
	reflector.ListerWatcher
	srv  *fakeapi.Server
	c    *churn
	done chan error // capacity 1: the writes' result, once compacted
	once sync.Once
}

func (w *compactAfterFirstPage) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	obj, err := w.ListerWatcher.List(ctx, opts)
	if l, ok := obj.(*corev1.PodList); ok && err == nil && l.Continue != "" {
		w.once.Do(func() {
			werr := w.c.tryWrites(10)
			w.srv.Compact()
			w.done <- werr
		})
	}
	return obj, err
}

func TestCompactionBetweenListPagesFallsBack(t *testing.T) {
	forEachEncoding(t, func(t *testing.T, ct string) {
		srv := newServer(t, 350)
		opts := quick()
		opts.WatchList = reflector.WatchListOff
		opts.PageSize = 100
		c := newChurn(t, srv)
		done := make(chan error, 1)
		r := startReflector(t, srv, opts, ct, func(lw reflector.ListerWatcher) reflector.ListerWatcher {
			return &compactAfterFirstPage{ListerWatcher: lw, srv: srv, c: c, done: done}
		})
		select {
		case err := <-done:
			require.NoError(t, err, "the writes between the pages")
		case <-time.After(converged):
			t.Fatal("no paged list: the compaction between pages never happened")
		}
		r.requireConverged(t)
		require.Positive(t, r.errorsOf(reflector.KindExpired), "the expired continue token must be seen")
	})
}

func TestThrottledWatchHonoursRetryAfter(t *testing.T) {
	forEachEncoding(t, func(t *testing.T, ct string) {
		srv, r, c := synced(t, 20, ct)
		srv.Faults().FailNext(fakeapi.Failure{Verb: "watch", Resource: "pods", Count: 1, Code: 429, RetryAfterSeconds: 1})
		srv.DropWatches()
		c.writes(t, 10)
		require.Eventually(t, func() bool { return r.errorsOf(reflector.KindThrottled) > 0 }, converged, 5*time.Millisecond)
		r.requireConverged(t)
		s := r.refl.Stats()
		require.GreaterOrEqual(t, s.LastBackoff, time.Second, "Retry-After: 1 is a floor for the wait")
		require.Zero(t, s.Relists)
	})
}

func TestServerErrorsOnListBackOffThenSync(t *testing.T) {
	forEachEncoding(t, func(t *testing.T, ct string) {
		srv := newServer(t, 20)
		srv.Faults().FailNext(fakeapi.Failure{Verb: "list", Resource: "pods", Count: 3, Code: 500})
		opts := quick()
		opts.WatchList = reflector.WatchListOff
		r := startReflector(t, srv, opts, ct, nil)
		r.requireConverged(t)
		require.GreaterOrEqual(t, r.errorsOf(reflector.KindServerError), int64(3))
	})
}

func TestStalledStreamIsRestartedByTheWatchdog(t *testing.T) {
	forEachEncoding(t, func(t *testing.T, ct string) {
		srv, r, c := synced(t, 20, ct)
		srv.Faults().StallWatches("pods", 0) // until resumed: silent for longer than 3 x 100ms
		c.writes(t, 10)
		require.Eventually(t, func() bool { return r.errorsOf(reflector.KindStuckWatch) > 0 }, converged, 5*time.Millisecond,
			"the watchdog must give up on the silent stream")
		srv.Faults().ResumeWatches("pods")
		r.requireConverged(t)
		require.Zero(t, r.refl.Stats().Relists)
	})
}

func TestCutFrameEndsWatchAndResumes(t *testing.T) {
	forEachEncoding(t, func(t *testing.T, ct string) {
		srv, r, c := synced(t, 20, ct)
		watches := r.refl.Stats().Watches
		srv.Faults().CutNextWatchFrame("pods")
		c.writes(t, 10)
		require.Eventually(t, func() bool { return r.refl.Stats().Watches > watches }, converged, 5*time.Millisecond,
			"the cut watch must be replaced")
		r.requireConverged(t)
		require.Zero(t, r.refl.Stats().Relists)
	})
}

func TestMalformedFrameIsATypedDecodeError(t *testing.T) {
	forEachEncoding(t, func(t *testing.T, ct string) {
		srv, r, c := synced(t, 20, ct)
		srv.Faults().MalformNextWatchFrame("pods")
		c.writes(t, 10)
		// Wait for the error itself: the writes may cancel out (creates
		// of pods that are deleted again), and then the store "converges"
		// before the watch has even read the bad frame.
		require.Eventually(t, func() bool { return r.errorsOf(reflector.KindDecode) > 0 }, converged, 5*time.Millisecond,
			"the malformed frame must be reported as a decode error")
		r.requireConverged(t)
	})
}

// A frame the client refuses, here one over its size limit, sits in the
// server's history at a fixed resourceVersion. Watching again from before
// it meets it again, every time, until the server compacts it away: the
// store would hear nothing more. After a decode error the reflector lists
// instead, and the list, whose size limit is another, brings the big pod
// and moves the watch past it.
func TestRefusedFrameDoesNotWedgeTheWatch(t *testing.T) {
	forEachEncoding(t, func(t *testing.T, ct string) {
		srv := newServer(t, 20)
		cfg := rest.Config{Host: srv.URL(), ContentType: ct, MaxFrameBytes: 16 << 10}
		r := startReflectorWith(t, srv, cfg, quick(), nil)
		r.requireConverged(t)
		big := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "big",
			Annotations: map[string]string{"note": strings.Repeat("x", 32<<10)}}}
		_, err := srv.Create(big)
		require.NoError(t, err)
		require.Eventually(t, func() bool { return r.errorsOf(reflector.KindDecode) > 0 }, converged, 5*time.Millisecond,
			"the oversized frame must be refused")
		newChurn(t, srv).writes(t, 10)
		r.requireConverged(t)
		require.Positive(t, r.refl.Stats().Relists)
	})
}

// intruder puts a Service at the head of the first watch stream: an object
// of the wrong kind, which a misconfigured proxy or server could send.
type intruder struct {
	reflector.ListerWatcher
	once sync.Once
}

func (w *intruder) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	real, err := w.ListerWatcher.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	first := false
	w.once.Do(func() { first = true })
	if !first {
		return real, nil
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "intruder", ResourceVersion: opts.ResourceVersion}}
	return newPrepended(real, watch.Event{Type: watch.Added, Object: svc}), nil
}

// prepended is a watch that sends one extra event, then relays another
// watch's events. Stop stops both and waits for the relay goroutine.
type prepended struct {
	out  chan watch.Event
	stop chan struct{}
	done chan struct{}
	once sync.Once
	real watch.Interface
}

func newPrepended(real watch.Interface, first watch.Event) *prepended {
	p := &prepended{out: make(chan watch.Event), stop: make(chan struct{}), done: make(chan struct{}), real: real}
	go p.relay(first)
	return p
}

func (p *prepended) relay(first watch.Event) {
	defer close(p.done)
	defer close(p.out)
	ev, ok := first, true
	for ok {
		select {
		case p.out <- ev:
		case <-p.stop:
			return
		}
		select {
		case ev, ok = <-p.real.ResultChan():
		case <-p.stop:
			return
		}
	}
}

func (p *prepended) ResultChan() <-chan watch.Event { return p.out }

func (p *prepended) Stop() {
	p.once.Do(func() { close(p.stop) })
	p.real.Stop()
	<-p.done
}

func TestWrongObjectKindIsSkippedAndReported(t *testing.T) {
	forEachEncoding(t, func(t *testing.T, ct string) {
		srv := newServer(t, 20)
		opts := quick()
		opts.WatchList = reflector.WatchListOff
		r := startReflector(t, srv, opts, ct, func(lw reflector.ListerWatcher) reflector.ListerWatcher {
			return &intruder{ListerWatcher: lw}
		})
		require.Eventually(t, func() bool { return r.errorsOf(reflector.KindWrongType) > 0 }, converged, 5*time.Millisecond)
		c := newChurn(t, srv)
		c.writes(t, 10)
		r.requireConverged(t) // convergence also proves the intruder was not stored
	})
}

// A server restart on the same port, as the client sees it: every
// connection is reset, new ones fail for a while, then the same address
// answers again with the same history (etcd outlives the API server). The
// reflector must resume with a watch from its last resourceVersion, not a
// relist: after a control-plane restart, thousands of relisting clients are
// the storm kubernetes/kubernetes#119646 describes.
func TestServerRestartOnSamePortResumesWithoutRelist(t *testing.T) {
	forEachEncoding(t, func(t *testing.T, ct string) {
		srv := newServer(t, 50)
		proxy := newTCPProxy(t, strings.TrimPrefix(srv.URL(), "http://"))
		opts := quick()
		opts.StuckWatchFactor = -1 // see TestDroppedWatchesResumeWithoutRelist
		r := startReflectorAt(t, srv, "http://"+proxy.Addr(), opts, ct, nil)
		c := newChurn(t, srv)
		r.requireConverged(t)
		// Writes delivered before the outage move the last RV past the
		// snapshot's, so that resuming from either can be told apart.
		c.writes(t, 10)
		r.requireConverged(t)
		read := r.store.newestRV(t)
		watches := r.refl.Stats().Watches

		proxy.Pause() // the server is down: new connections fail
		proxy.DropAll()
		c.writes(t, 30) // the world moves on meanwhile
		require.Eventually(t, func() bool { return r.errorsOf(reflector.KindNetwork) > 0 }, converged, 5*time.Millisecond,
			"the reflector must meet the dead server")
		proxy.Resume() // back on the same port

		r.requireConverged(t)
		s := r.refl.Stats()
		require.Zero(t, s.Relists, "a restart is not a reason to relist")
		require.Greater(t, s.Watches, watches)
		requireNothingResent(t, srv, read)
	})
}
