package wire

import (
	"context"
	"errors"
	"github.com/seed31a95821/informer/rest"
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// Watcher is the watch.Interface returned by ListerWatcher.Watch: one HTTP
// response body, one goroutine decoding it, one result channel. The
// channel holds up to aheadMax events: while whole frames are already
// buffered behind the one just decoded (a backlog), the goroutine decodes
// them too and sends them in a row, so that the reader wakes once for
// them all (watch_batch.go). At most 2 x aheadMax decoded events wait.
//
// How a watch ends, and what the consumer sees:
//
//	cause                                 last event           Err()
//	server closes between frames          (none)               nil
//	Stop()                                (none)               nil
//	context cancelled                     (none)               ctx.Err()
//	stream ends or connection fails       (none)               *FrameError{Kind: ErrTruncatedFrame},
//	  inside a frame                                             Cause: the transport error, if any
//	connection fails between frames       (none)               the wrapped transport error
//	oversized or malformed frame          watch.Error+Status   *FrameError{Kind: ErrFrameTooLarge or ErrMalformedFrame}
//
// A stream cut inside a frame is not a normal close: no event is sent
// for the partial frame, and Err returns the *FrameError, whose Cause
// (io.ErrUnexpectedEOF or the transport error) makes the reflector file
// it as KindNetwork, back off, and watch again from the last
// resourceVersion (docs/reliability.md, CutMidFrame). Only a close
// between frames (Err nil) re-watches at once. An oversized or malformed
// frame is the server (or a proxy) sending something we refuse; the final
// watch.Error event carries a metav1.Status (Code 500, Reason InternalError,
// a Cause whose Type is "FrameTooLarge" or "MalformedFrame", and a second,
// "ClientWatchDecoding", as apimachinery's own StreamWatcher writes it) so
// that a reflector that only looks at events files it as a decoding
// failure: ours backs off and relists, to get past the frame.
//
// A Watcher is safe for concurrent use: Stop, Err and BytesDecoded may be
// called from any goroutine, and Stop may be called more than once.
type Watcher struct {
	result  chan watch.Event
	decoder eventDecoder
	body    io.ReadCloser
	cancel  context.CancelFunc // cancels the request context: unblocks reads and sends
	done    chan struct{}      // closed when the decoding goroutine has exited
	stopped atomic.Bool        // set by Stop before cancelling, so the end is not reported as an error

	bytes     atomic.Int64  // stream bytes decoded by this watch
	lwCounter *atomic.Int64 // the owning ListerWatcher's total, may be nil
	redact    *rest.Client  // redacts ERROR events and Err

	mu  sync.Mutex // guards err
	err error
}

// newWatcher starts the decoding goroutine. It takes ownership of resp.Body
// and of cancel, which must cancel ctx.
func newWatcher(ctx context.Context, cancel context.CancelFunc, resp *http.Response, dec eventDecoder, lwCounter *atomic.Int64, red *rest.Client) *Watcher {
	w := &Watcher{
		redact:    red,
		result:    make(chan watch.Event, aheadMax),
		decoder:   dec,
		body:      resp.Body,
		cancel:    cancel,
		done:      make(chan struct{}),
		lwCounter: lwCounter,
	}
	go w.run(ctx)
	return w
}

// ResultChan returns the event channel. It is closed when the watch ends.
func (w *Watcher) ResultChan() <-chan watch.Event { return w.result }

// Stop ends the watch, closes the body and waits until the decoding
// goroutine has exited, so that nothing of the watch outlives the call. The
// result channel is closed by then; events not yet received are dropped.
func (w *Watcher) Stop() {
	w.stopped.Store(true)
	w.cancel()
	_ = w.body.Close()
	<-w.done
}

// Err reports why the watch ended (see the table on Watcher). It returns nil
// while the watch is running and after a clean end.
func (w *Watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// BytesDecoded returns the number of stream bytes this watch has decoded so
// far. Reflectors look for this method to report decoding volume.
func (w *Watcher) BytesDecoded() int64 { return w.bytes.Load() }

// run is the decoding goroutine: decode, send, repeat. It owns the body and
// the decoder, and is the only writer of the result channel. It decodes
// through decodeAhead, which returns one event or, when more frames are
// already buffered, several (watch_batch.go); it sends them in order, and
// only then reports an error that came after them.
func (w *Watcher) run(ctx context.Context) {
	defer close(w.done)
	defer close(w.result)
	// Cancelling releases the request context even when nobody calls Stop
	// after the server ended the stream.
	defer w.cancel()
	defer func() { _ = w.body.Close() }()
	var counted int64
	framer, _ := w.decoder.(bufferedFramer)
	batch := make([]watch.Event, 0, aheadMax)
	for {
		var err error
		batch, err = w.decodeAhead(framer, batch[:0])
		counted = w.count(counted)
		for i := range batch {
			select {
			case w.result <- batch[i]:
			case <-ctx.Done():
				w.finish(ctx, ctx.Err())
				return
			}
			batch[i] = watch.Event{}
		}
		if err != nil {
			w.finish(ctx, err)
			return
		}
	}
}

// count publishes the bytes decoded since the last call.
func (w *Watcher) count(counted int64) int64 {
	now := w.decoder.Offset()
	if delta := now - counted; delta > 0 {
		w.bytes.Add(delta)
		if w.lwCounter != nil {
			w.lwCounter.Add(delta)
		}
	}
	return now
}

// finish records why the stream ended and, for frames we refused, sends the
// final watch.Error event.
func (w *Watcher) finish(ctx context.Context, err error) {
	switch {
	case w.stopped.Load():
		return // Stop was called: whatever the read returned, it is not news
	case ctx.Err() != nil:
		err = ctx.Err() // the read failed because the context ended
	case err == io.EOF:
		return
	}
	w.mu.Lock()
	w.err = w.redact.Redact(err)
	w.mu.Unlock()

	var fe *FrameError
	if !errors.As(err, &fe) || fe.Kind == ErrTruncatedFrame {
		return
	}
	status := frameErrorStatus(fe)
	w.redact.RedactStatus(status)
	select {
	case w.result <- watch.Event{Type: watch.Error, Object: status}:
	case <-ctx.Done():
	}
}

// clientWatchDecoding is the Status cause type of an undecodable watch
// event, as apimachinery's StreamWatcher spells it.
const clientWatchDecoding metav1.CauseType = "ClientWatchDecoding"

// frameErrorStatus describes a refused frame as a Status, the only error
// shape a watch event can carry.
func frameErrorStatus(fe *FrameError) *metav1.Status {
	cause := "MalformedFrame"
	if errors.Is(fe, ErrFrameTooLarge) {
		cause = "FrameTooLarge"
	}
	return &metav1.Status{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"},
		Status:   metav1.StatusFailure,
		Code:     http.StatusInternalServerError,
		Reason:   metav1.StatusReasonInternalError,
		Message:  fe.Error(),
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{
			{Type: metav1.CauseType(cause), Message: fe.Error()},
			// The cause apimachinery's own StreamWatcher reports for a frame
			// it cannot decode, so any reflector (ours, client-go's) files
			// this as a decoding failure rather than a server error.
			{Type: clientWatchDecoding, Message: fe.Error()},
		}},
	}
}
