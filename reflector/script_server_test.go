package reflector_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/datadriven"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer/reflector"
)

// The scripted side of a script: a server that answers each List and
// Watch with what the script queued, and a store that records each call.
// Both log on the reflector's goroutine, so the log is in the order the
// reflector acted.

// server is the scripted ListerWatcher. A call logs its request, then
// waits for the next answer the script queued (or ctx).
type server struct {
	s       *script
	lists   chan listReply
	watches chan watchReply
	// watchList is what SupportsWatchList answers: "" does not implement
	// the question at all (see capabilities.go), "yes" or "no" do.
	watchList string
	bytes     int64 // what BytesDecoded answers
	// scope is what Scope answers: namespace, label and field selector.
	scope [3]string

	mu      sync.Mutex // guards streams
	streams []*stream  // every stream the script made, newest last
}

type listReply struct {
	obj runtime.Object
	err error
}

type watchReply struct {
	w          *stream // nil, without err: a typed nil watch
	untypedNil bool    // answer a nil watch.Interface instead
	err        error
}

func (sv *server) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	sv.s.logf("list%s", optsLine(opts))
	select {
	case rp := <-sv.lists:
		return rp.obj, rp.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (sv *server) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	sv.s.logf("watch%s", optsLine(opts))
	select {
	case rp := <-sv.watches:
		if rp.err != nil || rp.untypedNil {
			return nil, rp.err
		}
		return rp.w, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Scope is the optional method the reflector reads for the part of the
// resource it asked for; the scripted server sends whatever the script
// says, in scope or not.
func (sv *server) Scope() (namespace, labelSelector, fieldSelector string) {
	return sv.scope[0], sv.scope[1], sv.scope[2]
}

// BytesDecoded is the optional method the reflector reads for Stats.BytesDecoded.
func (sv *server) BytesDecoded() int64 { return sv.bytes }

// optsLine prints the options a request carried, the zero ones left out.
func optsLine(o metav1.ListOptions) string {
	var b strings.Builder
	if o.Continue == "" {
		fmt.Fprintf(&b, " rv=%q", o.ResourceVersion)
	} else {
		fmt.Fprintf(&b, " continue=%s", o.Continue)
		if o.ResourceVersion != "" {
			fmt.Fprintf(&b, " rv=%q", o.ResourceVersion)
		}
	}
	if o.ResourceVersionMatch != "" {
		fmt.Fprintf(&b, " match=%s", o.ResourceVersionMatch)
	}
	if o.Limit != 0 {
		fmt.Fprintf(&b, " limit=%d", o.Limit)
	}
	if o.SendInitialEvents != nil {
		fmt.Fprintf(&b, " send-initial-events=%t", *o.SendInitialEvents)
	}
	if o.AllowWatchBookmarks {
		b.WriteString(" bookmarks")
	}
	if o.TimeoutSeconds != nil {
		fmt.Fprintf(&b, " timeout=%ds", *o.TimeoutSeconds)
	}
	return b.String()
}

// watchListServer is a server that says whether it supports WatchList.
type watchListServer struct{ *server }

func (sv watchListServer) SupportsWatchList() bool { return sv.watchList == "yes" }

// lw returns the ListerWatcher the reflector is given.
func (sv *server) lw() reflector.ListerWatcher {
	if sv.watchList == "" {
		return sv
	}
	return watchListServer{sv}
}

// listAnswer reads a list command: a page (rv=, continue=, one object a
// line), error=, nil[=podlist|unstructured] (a nil list, untyped or
// typed) or not-a-list.
func listAnswer(t *testing.T, d *datadriven.TestData) listReply {
	if err := answerError(t, d); err != nil {
		return listReply{err: err}
	}
	var rv, cont string
	d.MaybeScanArgs(t, "rv", &rv)
	d.MaybeScanArgs(t, "continue", &cont)
	if a, ok := d.Arg("nil"); ok {
		return listReply{obj: nilList(t, a)}
	}
	if d.HasArg("not-a-list") {
		return listReply{obj: pod("x", rv)}
	}
	list := &metav1.List{ListMeta: metav1.ListMeta{ResourceVersion: rv, Continue: cont}}
	for _, line := range lines(d.Input) {
		list.Items = append(list.Items, runtime.RawExtension{Object: object(t, line)})
	}
	return listReply{obj: list}
}

// nilList is what list nil answers.
func nilList(t *testing.T, a datadriven.CmdArg) runtime.Object {
	if len(a.Vals) == 0 {
		return nil
	}
	switch a.Vals[0] {
	case "podlist":
		return (*corev1.PodList)(nil)
	case "unstructured":
		return (*unstructured.UnstructuredList)(nil)
	}
	t.Fatalf("list nil=%s: want podlist or unstructured", a.Vals[0])
	return nil
}

// watchAnswer reads a watch command: a stream that delivers the events
// listed (one a line) and, with close or close-error=, then ends; error=,
// a refused watch; or nil[=typed], a nil watch, untyped or typed.
func (sv *server) watchAnswer(t *testing.T, d *datadriven.TestData) watchReply {
	if err := answerError(t, d); err != nil {
		return watchReply{err: err}
	}
	if a, ok := d.Arg("nil"); ok {
		return watchReply{untypedNil: len(a.Vals) == 0}
	}
	sv.mu.Lock()
	w := &stream{s: sv.s, id: len(sv.streams) + 1, ch: make(chan watch.Event, streamBuffer)}
	sv.streams = append(sv.streams, w)
	sv.mu.Unlock()
	w.send(t, events(t, d.Input))
	if d.HasArg("close") || d.HasArg("close-error") {
		w.end(closeError(t, d))
	}
	return watchReply{w: w}
}

// newest is the stream the script made last.
func (sv *server) newest(t *testing.T) *stream {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if len(sv.streams) == 0 {
		t.Fatal("no watch stream yet")
	}
	return sv.streams[len(sv.streams)-1]
}

// streamBuffer is how many events a script may send before the reflector
// takes them.
const streamBuffer = 4096

// stream is a scripted watch: events the script sends, then an end,
// clean or broken (a stream's optional Err method).
type stream struct {
	s  *script
	id int
	ch chan watch.Event

	mu     sync.Mutex // guards closed and err
	closed bool
	err    error
}

func (w *stream) ResultChan() <-chan watch.Event { return w.ch }

// Stop is the reflector giving the stream up; it is logged when the
// stream was still open, so that a script shows every watch is released.
func (w *stream) Stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.closed = true
		close(w.ch)
		w.s.logf("watch stream %d stopped by the reflector", w.id)
	}
}

// Err says why the stream ended (the optional method the reflector asks).
func (w *stream) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *stream) send(t *testing.T, evs []watch.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ev := range evs {
		if w.closed {
			t.Fatalf("send on stream %d, which is closed", w.id)
		}
		select {
		case w.ch <- ev:
		default:
			t.Fatalf("stream %d holds %d events already", w.id, streamBuffer)
		}
	}
}

// end closes the stream from the server's side, for the reason err.
func (w *stream) end(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.closed, w.err = true, err
		close(w.ch)
	}
}

// recordingStore logs every call the reflector makes on its store. The
// script can make a coming call of a method fail (store-fails: it returns
// an error), cancel Run's context from inside it (store-cancels), or block
// until the script releases it (store-holds), to catch the reflector
// between two steps or let time pass in the middle of one.
type recordingStore struct {
	s *script

	mu   sync.Mutex         // guards next and held
	next map[string]*action // method -> what its coming call does
	held chan struct{}      // closed by release; nil when nothing is held
}

// action is what a coming call of a method does, once skip more calls
// have gone by.
type action struct {
	how  string // "fails", "cancels" or "holds"
	skip int
}

func (st *recordingStore) plan(method, how string, skip int) {
	st.mu.Lock()
	st.next[method] = &action{how: how, skip: skip}
	st.mu.Unlock()
}

// due returns what this call of method does: "" for nothing special.
func (st *recordingStore) due(method string) (how string, held chan struct{}) {
	st.mu.Lock()
	defer st.mu.Unlock()
	a := st.next[method]
	if a == nil {
		return "", nil
	}
	if a.skip > 0 {
		a.skip--
		return "", nil
	}
	delete(st.next, method)
	if a.how == "holds" {
		st.held = make(chan struct{})
	}
	return a.how, st.held
}

// release lets a held call return.
func (st *recordingStore) release() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.held != nil {
		close(st.held)
		st.held = nil
	}
}

func (st *recordingStore) call(method, line string) error {
	how, held := st.due(method)
	switch how {
	case "fails":
		st.s.logf("store %s (fails)", line)
		return errors.New("injected store failure")
	case "cancels":
		st.s.logf("store %s (and Run's context is cancelled)", line)
		st.s.cancelRuns()
		return nil
	case "holds":
		st.s.logf("store %s (held)", line)
		<-held
		return nil
	}
	st.s.logf("store %s", line)
	return nil
}

func (st *recordingStore) Add(obj runtime.Object) error { return st.call("add", "add "+nameRV(obj)) }
func (st *recordingStore) Update(obj runtime.Object) error {
	return st.call("update", "update "+nameRV(obj))
}
func (st *recordingStore) Delete(obj runtime.Object) error {
	return st.call("delete", "delete "+nameRV(obj))
}
func (st *recordingStore) Resync() error            { return st.call("resync", "resync") }
func (st *recordingStore) Bookmark(rv string) error { return st.call("bookmark", "bookmark "+rv) }

func (st *recordingStore) Replace(list []runtime.Object, rv string) error {
	names := make([]string, len(list))
	for i, obj := range list {
		names[i] = nameRV(obj)
	}
	return st.call("replace", fmt.Sprintf("replace rv=%q [%s]", rv, strings.Join(names, " ")))
}
