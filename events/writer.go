package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/client"
	"github.com/seed31a95821/informer/rest"
)

// api is the group an Event object is written to.
type api int

const (
	eventsAPI api = iota // events.k8s.io/v1, the current API
	coreAPI              // core/v1, for servers without events.k8s.io/v1
)

// How hard one write tries: a few tries, the pause doubling between them,
// each bounded. A stalled server holds the writer at most about
// writeTries*writeTimeout per event; meanwhile the queue absorbs, and then
// drops.
const (
	writeTries   = 3
	firstPause   = time.Second
	writeTimeout = 10 * time.Second
	// maxMessageBytes is events.k8s.io/v1's limit on a note.
	maxMessageBytes = 1024
)

// writer turns recorded events into Event objects on the server. Only the
// recorder's Run goroutine uses it.
type writer struct {
	r      *Recorder
	c      *client.Client
	core   *client.Resource[*corev1.Event]
	v1     *client.Resource[*eventsv1.Event]
	api    api // eventsAPI until the server says it does not serve it (discovery, or a 404)
	corr   *correlator
	scheme *runtime.Scheme                          // finds the kinds of involved objects
	kinds  map[reflect.Type]schema.GroupVersionKind // what scheme found, by Go type
}

func newWriter(cfg rest.Config, opts Options, r *Recorder) (*writer, error) {
	scheme := apiresource.NewScheme()
	if err := eventsv1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	core, err := client.For[*corev1.Event](c)
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	// A server whose discovery does not list events.k8s.io/v1 is written
	// core/v1 Events from the start; one without discovery is tried, and
	// falls back on its first 404 (create).
	v1, err := client.For[*eventsv1.Event](c)
	using := eventsAPI
	switch {
	case meta.IsNoMatchError(err):
		using = coreAPI
	case err != nil:
		return nil, fmt.Errorf("events: %w", err)
	}
	if opts.Scheme != nil {
		scheme = opts.Scheme
	}
	return &writer{r: r, c: c, core: core, v1: v1, api: using, corr: newCorrelator(opts.SpamBurst, opts.SpamRefill),
		scheme: scheme, kinds: map[reflect.Type]schema.GroupVersionKind{}}, nil
}

// handle filters, aggregates and writes one recorded event.
func (w *writer) handle(ctx context.Context, p pending) {
	gvk, ok := w.kindOf(p)
	if !ok {
		w.r.invalid.Add(1)
		return
	}
	p.object.kind = gvk
	if !w.corr.allow(p.object, p.at) {
		w.r.filtered.Add(1)
		return
	}
	l, message := w.corr.record(similarKey{object: p.object, eventType: p.eventType, reason: p.reason}, truncate(p.message), p.at)
	patch := l.name != ""
	if !patch {
		l.name = eventName(p.object.name, p.at)
	}
	err := retry(ctx, func(ctx context.Context) error {
		if patch {
			err := w.patch(ctx, p, l, message)
			if !apierrors.IsNotFound(err) {
				return err
			}
			patch = false // the Event expired or was deleted: write it anew
		}
		return w.create(ctx, p, l, message)
	})
	switch {
	case err != nil:
		w.r.failed.Add(1)
		if !patch {
			l.name = "" // never created: the next one creates
		}
	case patch:
		w.r.patched.Add(1)
	default:
		w.r.created.Add(1)
	}
}

// create writes l as a new Event, in events.k8s.io/v1 unless the server
// does not serve it. An Event of that name already there is the one an
// earlier try created, when its answer was lost.
func (w *writer) create(ctx context.Context, p pending, l *logged, message string) error {
	var err error
	if w.api == eventsAPI {
		_, err = w.v1.Create(ctx, w.eventsV1(p, l, message), metav1.CreateOptions{})
		if errors.Is(err, client.ErrUnserved) {
			w.api = coreAPI
		}
	}
	if w.api == coreAPI {
		_, err = w.core.Create(ctx, w.coreV1(p, l, message), metav1.CreateOptions{})
	}
	if apierrors.IsAlreadyExists(err) {
		err = nil
	}
	if err == nil {
		l.api = w.api
	}
	return err
}

// patch bumps the count of the Event l names: series.count in
// events.k8s.io/v1 (the only field an update may change there), count
// and lastTimestamp in core/v1.
func (w *writer) patch(ctx context.Context, p pending, l *logged, message string) error {
	ns := eventNamespace(p.object)
	if l.api == eventsAPI {
		body, err := json.Marshal(map[string]any{"series": eventsv1.EventSeries{
			Count: l.count, LastObservedTime: metav1.NewMicroTime(l.latest)}})
		if err != nil {
			return err
		}
		_, err = w.v1.Patch(ctx, ns, l.name, types.MergePatchType, body, metav1.PatchOptions{}, "")
		return err
	}
	body, err := json.Marshal(map[string]any{"count": l.count, "lastTimestamp": metav1.NewTime(l.latest), "message": message})
	if err != nil {
		return err
	}
	_, err = w.core.Patch(ctx, ns, l.name, types.MergePatchType, body, metav1.PatchOptions{}, "")
	return err
}

func (w *writer) reference(p pending) corev1.ObjectReference {
	apiVersion, kind := p.object.kind.ToAPIVersionAndKind()
	return corev1.ObjectReference{Kind: kind, APIVersion: apiVersion, Namespace: p.object.namespace,
		Name: p.object.name, UID: p.object.uid, ResourceVersion: p.rv}
}

func (w *writer) eventsV1(p pending, l *logged, message string) *eventsv1.Event {
	o := w.r.opts
	e := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: eventNamespace(p.object), Name: l.name},
		EventTime:  metav1.NewMicroTime(l.first), ReportingController: o.Component, ReportingInstance: o.Instance,
		Action: p.reason, Reason: p.reason, Regarding: w.reference(p), Note: message, Type: p.eventType,
	}
	if l.count > 1 { // written anew after it expired on the server
		e.Series = &eventsv1.EventSeries{Count: l.count, LastObservedTime: metav1.NewMicroTime(l.latest)}
	}
	return e
}

func (w *writer) coreV1(p pending, l *logged, message string) *corev1.Event {
	o := w.r.opts
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: eventNamespace(p.object), Name: l.name},
		InvolvedObject: w.reference(p), Reason: p.reason, Message: message, Type: p.eventType, Count: l.count,
		FirstTimestamp: metav1.NewTime(l.first), LastTimestamp: metav1.NewTime(l.latest),
		Source:              corev1.EventSource{Component: o.Component, Host: o.Instance},
		ReportingController: o.Component, ReportingInstance: o.Instance, Action: p.reason,
	}
}

// eventNamespace is where an object's Events live: its namespace, or
// "default" for a cluster-scoped object, as the API server requires.
func eventNamespace(obj objectRef) string {
	if obj.namespace == "" {
		return metav1.NamespaceDefault
	}
	return obj.namespace
}

// truncate cuts a message to the size events.k8s.io/v1 accepts, on a
// character boundary.
// eventName is the name of a new Event about the object named object:
// the object's name, a dot, and the time in hex, as client-go names them.
// The object's name is cut so that the whole stays within the 253
// characters of a DNS subdomain, and the cut never leaves a dot or dash
// before the dot; otherwise a long-named object's events would all be
// refused (422) and lost.
func eventName(object string, at time.Time) string {
	suffix := "." + strconv.FormatInt(at.UnixNano(), 16)
	if room := 253 - len(suffix); len(object) > room {
		object = strings.TrimRight(object[:room], ".-")
	}
	return object + suffix
}

func truncate(s string) string {
	if len(s) <= maxMessageBytes {
		return s
	}
	cut := maxMessageBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// retry calls write up to writeTries times while it fails with an error
// worth retrying, each call bounded by writeTimeout, the pause doubling.
func retry(ctx context.Context, write func(context.Context) error) error {
	pause := firstPause
	for try := 1; ; try++ {
		tctx, cancel := context.WithTimeout(ctx, writeTimeout)
		err := write(tctx)
		cancel()
		if err == nil || try == writeTries || !retriable(err) || ctx.Err() != nil {
			return err
		}
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		pause *= 2
	}
}

// retriable is true for the errors that may pass: the network, a timeout,
// a server busy or failing. The server refusing the Event is final.
func retriable(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true // the network, or a timeout before any answer
	}
	code := status.Status().Code
	return code == http.StatusTooManyRequests || code >= http.StatusInternalServerError ||
		apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err)
}

// kindOf is the involved object's kind: the one it carries, or its Go
// type's in the scheme.
func (w *writer) kindOf(p pending) (schema.GroupVersionKind, bool) {
	if !p.object.kind.Empty() {
		return p.object.kind, true
	}
	if gvk, ok := w.kinds[p.goType]; ok {
		return gvk, true
	}
	if p.goType == nil || p.goType.Kind() != reflect.Pointer {
		return schema.GroupVersionKind{}, false
	}
	obj, ok := reflect.New(p.goType.Elem()).Interface().(runtime.Object)
	if !ok {
		return schema.GroupVersionKind{}, false
	}
	gvks, _, err := w.scheme.ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		return schema.GroupVersionKind{}, false
	}
	w.kinds[p.goType] = gvks[0]
	return gvks[0], true
}
