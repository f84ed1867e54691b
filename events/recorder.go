package events

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/seed31a95821/informer/rest"
)

// ErrInvalidOptions is wrapped by NewRecorder's errors: Options the API
// server would refuse in every Event.
var ErrInvalidOptions = errors.New("events: invalid options")

// maxFieldBytes is the API server's limit on an Event's reason, action
// and reportingInstance.
const maxFieldBytes = 128

// Options configure a Recorder. Only Component is required.
type Options struct {
	// Component names who reports: the Event's reportingController and
	// source.component, such as "web-controller" or
	// "example.com/web-controller" (a qualified name, as the API server
	// requires). kubectl shows it in the FROM column.
	Component string
	// Instance tells replicas of the component apart: reportingInstance
	// and source.host, at most 128 bytes. Empty means Component.
	Instance string
	// QueueSize bounds the events waiting to be written; Eventf drops
	// (and counts) what does not fit. Zero means DefaultQueueSize.
	QueueSize int
	// SpamBurst and SpamRefill are the token bucket of each involved
	// object: SpamBurst events at once, then one per SpamRefill. The rest
	// are dropped and counted. Zero means DefaultSpamBurst and
	// DefaultSpamRefill.
	SpamBurst  int
	SpamRefill time.Duration
	// Scheme finds the kind of an involved object that does not carry
	// one (objects from a cache usually do not): pass the factory's when
	// you record events about types of your own. Nil means
	// apiresource.NewScheme().
	Scheme *runtime.Scheme
}

// Stats counts what became of the events recorded.
type Stats struct {
	Created  uint64 // Event objects created
	Patched  uint64 // events counted on an existing Event by a patch
	Dropped  uint64 // events dropped because the queue was full
	Filtered uint64 // events dropped by the spam filter
	Failed   uint64 // writes given up after their retries
	Invalid  uint64 // events refused: no metadata, or a type not Normal or Warning
}

// pending is one recorded event on its way to the writer: everything it
// needs, copied from the object when recorded, so the caller may change
// the object afterwards.
type pending struct {
	object    objectRef
	goType    reflect.Type // to find the kind when the object did not carry it
	rv        string
	eventType string
	reason    string
	message   string
	at        time.Time
}

// Recorder records events about objects and writes them to the API
// server in the background, aggregated and rate-limited. Eventf never
// blocks. It is safe for concurrent use; Run must be called (once) for
// anything to be written.
type Recorder struct {
	opts   Options
	queue  chan pending
	writer *writer
	// The counters are atomics because Eventf (any goroutine) bumps
	// dropped and invalid while the writer bumps the others.
	created, patched, dropped, filtered, failed, invalid atomic.Uint64
}

// NewRecorder returns a recorder that writes to the API server cfg
// describes. Start it with Run.
func NewRecorder(cfg rest.Config, opts Options) (*Recorder, error) {
	// The API server's rules for reportingController and
	// reportingInstance, checked here once rather than refused with
	// every write.
	if msgs := validation.IsQualifiedName(opts.Component); len(msgs) > 0 {
		return nil, fmt.Errorf("events: Options.Component %q: %s: %w", opts.Component, strings.Join(msgs, "; "), ErrInvalidOptions)
	}
	if opts.Instance == "" {
		opts.Instance = opts.Component
	}
	if len(opts.Instance) > maxFieldBytes {
		return nil, fmt.Errorf("events: Options.Instance is longer than %d bytes: %w", maxFieldBytes, ErrInvalidOptions)
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = DefaultQueueSize
	}
	if opts.SpamBurst <= 0 {
		opts.SpamBurst = DefaultSpamBurst
	}
	if opts.SpamRefill <= 0 {
		opts.SpamRefill = DefaultSpamRefill
	}
	r := &Recorder{opts: opts, queue: make(chan pending, opts.QueueSize)}
	w, err := newWriter(cfg, opts, r)
	if err != nil {
		return nil, err
	}
	r.writer = w
	return r, nil
}

// Eventf records an event about obj: eventType is corev1.EventTypeNormal
// or corev1.EventTypeWarning, reason a short CamelCase word ("Synced",
// "FailedCreate"; at most 128 bytes, and the Event's action too), and the
// message is formatted from messageFmt and args (and cut to 1024 bytes).
// It never blocks and never fails: an event that cannot be queued, or is
// invalid, is dropped and counted in Stats. The message is formatted only
// when the event is queued.
func (r *Recorder) Eventf(obj runtime.Object, eventType, reason, messageFmt string, args ...any) {
	if len(r.queue) == cap(r.queue) { // full: drop before formatting anything
		r.dropped.Add(1)
		return
	}
	if v := reflect.ValueOf(obj); !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil()) {
		r.invalid.Add(1) // nil, or a nil *T: nothing to report about
		return
	}
	m, err := meta.Accessor(obj)
	if err != nil || (eventType != corev1.EventTypeNormal && eventType != corev1.EventTypeWarning) ||
		reason == "" || len(reason) > maxFieldBytes {
		r.invalid.Add(1)
		return
	}
	p := pending{
		object: objectRef{kind: obj.GetObjectKind().GroupVersionKind(), namespace: m.GetNamespace(),
			name: m.GetName(), uid: m.GetUID()},
		goType: reflect.TypeOf(obj), rv: m.GetResourceVersion(),
		eventType: eventType, reason: reason, message: truncate(fmt.Sprintf(messageFmt, args...)), at: time.Now(),
	}
	select {
	case r.queue <- p:
	default:
		r.dropped.Add(1)
	}
}

// Stats returns the recorder's counts so far.
func (r *Recorder) Stats() Stats {
	return Stats{Created: r.created.Load(), Patched: r.patched.Load(), Dropped: r.dropped.Load(),
		Filtered: r.filtered.Load(), Failed: r.failed.Load(), Invalid: r.invalid.Load()}
}

// Run writes the queued events, one at a time, until ctx ends; the events
// still queued then are not written. It is the recorder's one goroutine:
// call it once, as go rec.Run(ctx).
func (r *Recorder) Run(ctx context.Context) {
	defer r.writer.c.CloseIdleConnections()
	for {
		select {
		case <-ctx.Done():
			return
		case p := <-r.queue:
			r.writer.handle(ctx, p)
		}
	}
}
