package fakeapi

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/fakeapi/internal/admission"
	"github.com/seed31a95821/informer/fakeapi/internal/apply"
	"github.com/seed31a95821/informer/fakeapi/internal/crd"
	"github.com/seed31a95821/informer/fakeapi/internal/openapi"
)

// Defaults for the zero Options.
const (
	// DefaultCompactionWindow is how many events the history keeps.
	DefaultCompactionWindow = 10000
	// DefaultBookmarkInterval matches the real server, which sends a
	// bookmark to each watch about once a minute.
	DefaultBookmarkInterval = time.Minute
	// DefaultMaxBodyBytes is the real server's request body limit (3 MiB).
	DefaultMaxBodyBytes = 3 << 20
	// DefaultBodyTimeout bounds the time a request body may take to
	// arrive. 3 MiB over a loopback socket takes milliseconds; half a
	// minute only ever cuts a client that stalls on purpose or has died.
	DefaultBodyTimeout = 30 * time.Second
	// DefaultAddr listens on loopback only, on a random port.
	DefaultAddr = "127.0.0.1:0"
)

// Options configure a Server. The zero value serves the default resources
// on a random loopback port with no authentication.
type Options struct {
	// Scheme holds the Go types of the served resources. Nil means
	// apiresource.NewScheme(): every group of k8s.io/api and the
	// meta.k8s.io types. A default resource (a view, a review) whose kind
	// the scheme lacks is not served.
	Scheme *runtime.Scheme
	// Resources are served in addition to DefaultResources(). To serve your
	// own type, add it to a scheme (start from apiresource.NewScheme()) and
	// describe it here, e.g.
	//	ServedResource{Resource: apiresource.Resource{Kind: myv1.SchemeGroupVersion.WithKind("Widget")}}
	Resources []ServedResource
	// CompactionWindow is how many events the history keeps before the
	// oldest are compacted. Zero means DefaultCompactionWindow; negative
	// keeps everything (until Compact).
	CompactionWindow int
	// BookmarkInterval is how often a watch that allows bookmarks gets one.
	// Zero means DefaultBookmarkInterval.
	BookmarkInterval time.Duration
	// Token, when set, is the bearer token every request must carry;
	// others get 401 Unauthorized.
	Token string
	// MaxBodyBytes limits request bodies; larger ones get 413, at once
	// when their Content-Length says so. Zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// BodyTimeout bounds the time a request body may take to arrive, from
	// the moment its headers are read; a body still incomplete then fails
	// the request (400) and its connection is closed, so a client that
	// trickles a body, or announces one and never sends it, holds no
	// handler for long. Zero means DefaultBodyTimeout.
	BodyTimeout time.Duration
	// Addr is the listen address. Empty means DefaultAddr.
	Addr string
	// TLS, when set, serves HTTPS (and HTTP/2) with this configuration
	// instead of plain HTTP; URL then starts with https://. kubectl sends
	// a token only over TLS, so Token is usable by kubectl only with TLS.
	TLS *tls.Config
	// HistoryLimit bounds the records of writes and sent events. Zero means
	// DefaultHistoryLimit; negative records nothing (for benchmarks).
	HistoryLimit int
	// Now is the clock for creationTimestamp. Nil means time.Now.
	Now func() time.Time
	// CBOR serves application/cbor (and watches as application/cbor-seq)
	// to clients that ask for it, as kube-apiserver does with its
	// CBORServingAndStorage feature gate on. Off, as there by default,
	// such clients get their next choice, or 406.
	CBOR bool
}

func (o Options) withDefaults() Options {
	if o.Scheme == nil {
		o.Scheme = apiresource.NewScheme()
	}
	if o.CompactionWindow == 0 {
		o.CompactionWindow = DefaultCompactionWindow
	} else if o.CompactionWindow < 0 {
		o.CompactionWindow = 0
	}
	if o.BookmarkInterval <= 0 {
		o.BookmarkInterval = DefaultBookmarkInterval
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = DefaultBodyTimeout
	}
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if o.HistoryLimit == 0 {
		o.HistoryLimit = DefaultHistoryLimit
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Server is an in-process Kubernetes API server for tests, listening on a
// real socket like httptest.Server. It is safe for concurrent use.
type Server struct {
	opts   Options
	reg    *registry
	codecs serializer.CodecFactory
	strict admission.StrictDecoders
	faults *Faults
	sent   sentRecord
	// frames holds the watch frames shared by watches (watchframes.go).
	frames frameCache

	mu sync.Mutex // guards store, changed, dropped, seeded and crds
	// store holds all objects and history.
	store *store
	// changed is closed (and replaced) after every write, waking watches.
	changed chan struct{}
	// dropped is closed (and replaced) by DropWatches, ending watches.
	dropped chan struct{}
	// seeded counts pods made by SeedPods, to name the next ones.
	seeded int
	// crds maps the name of each served CRD to its resource
	// (customresources.go), and
	// crdViews to the definition it was served from.
	crds     map[string]*resourceInfo
	crdViews map[string]crd.Definition

	listener   net.Listener
	httpServer *http.Server
	url        string
	// closed is closed by Close; long requests (watches) end on it.
	closed    chan struct{}
	closeOnce sync.Once
	serveDone chan struct{}
	conns     connTracker
	open      openWatches // the watches being served (openwatches.go)
	// openapi holds the OpenAPI documents, loaded on first use.
	openapi openapi.Documents
	// apply holds the field managers of managedFields and server-side
	// apply (fieldmanager.go).
	apply *apply.Managers
}

// NewServer starts a server listening on opts.Addr and serving at once.
func NewServer(opts Options) (*Server, error) {
	opts = opts.withDefaults()
	resources := append(defaultResourcesIn(opts.Scheme), opts.Resources...)
	reg, err := newRegistry(opts.Scheme, resources)
	if err != nil {
		return nil, err
	}
	if err := reg.addViews(builtinViews()); err != nil {
		return nil, err
	}
	for _, ri := range reviewResources(opts.Scheme) {
		if err := reg.add(ri); err != nil {
			return nil, err
		}
	}
	if err := reg.add(crdResource()); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("fakeapi: listen on %s: %w", opts.Addr, err)
	}
	scheme := "http"
	if opts.TLS != nil {
		tc := opts.TLS.Clone()
		if len(tc.NextProtos) == 0 {
			tc.NextProtos = []string{"h2", "http/1.1"} // http.Server speaks h2 on *tls.Conn that negotiated it
		}
		ln, scheme = tls.NewListener(ln, tc), "https"
	}
	s := &Server{
		opts:      opts,
		reg:       reg,
		codecs:    newCodecs(opts),
		strict:    admission.NewStrictDecoders(opts.Scheme),
		apply:     apply.NewManagers(opts.Scheme, isDefaultKind),
		faults:    newFaults(),
		sent:      sentRecord{limit: opts.HistoryLimit},
		store:     newStore(opts.CompactionWindow, opts.HistoryLimit, opts.Now),
		crds:      map[string]*resourceInfo{},
		crdViews:  map[string]crd.Definition{},
		changed:   make(chan struct{}),
		dropped:   make(chan struct{}),
		listener:  ln,
		url:       scheme + "://" + ln.Addr().String(),
		closed:    make(chan struct{}),
		serveDone: make(chan struct{}),
	}
	s.httpServer = &http.Server{
		Handler:           http.HandlerFunc(s.serveHTTP),
		ReadHeaderTimeout: 10 * time.Second,
		ConnState:         s.conns.track,
	}
	// Set before the accept loop starts: requests read it under s.mu.
	s.store.tracker = s.trackWrite
	go func() {
		defer close(s.serveDone)
		// Serve returns ErrServerClosed after Close; nothing to report.
		_ = s.httpServer.Serve(ln)
	}()
	return s, nil
}

// defaultResourcesIn keeps the default resources whose kinds the scheme
// knows, so a custom scheme need not carry every built-in type.
func defaultResourcesIn(scheme *runtime.Scheme) []ServedResource {
	var out []ServedResource
	for _, r := range DefaultResources() {
		if scheme.Recognizes(r.Kind) {
			out = append(out, r)
		}
	}
	return out
}

// URL returns the base URL, e.g. "http://127.0.0.1:40123".
func (s *Server) URL() string { return s.url }

// Close stops the server: it ends every watch, closes every connection and
// returns once every request goroutine has finished and net/http has closed
// every connection. Safe to call twice.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.closed)
		_ = s.httpServer.Close()
		<-s.serveDone // no connection is accepted after this
		s.conns.wait()
		s.conns.waitClosed()
	})
}

// CloseClientConnections forcibly closes every open client connection, as
// a network failure would. The server keeps serving new ones.
func (s *Server) CloseClientConnections() { s.conns.closeAll() }

// Faults returns the fault-injection handle.
func (s *Server) Faults() *Faults { return s.faults }

// ResourceVersion returns the current global resourceVersion.
func (s *Server) ResourceVersion() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.store.rv
}

// Create stores a copy of obj, choosing the resource from obj's Go type,
// and returns the stored state (with resourceVersion, UID and
// creationTimestamp). Errors are the same *apierrors.StatusError values the
// HTTP API sends (AlreadyExists, Invalid), or ErrNotServed.
//
// A CustomResourceDefinition (an *unstructured.Unstructured of kind
// apiextensions.k8s.io/v1 CustomResourceDefinition) is checked as over HTTP
// and its resource served at once; its objects are then created as
// *unstructured.Unstructured too.
func (s *Server) Create(obj runtime.Object) (runtime.Object, error) {
	ri, err := s.reg.forObject(obj)
	if err != nil {
		return nil, err
	}
	if ri.Kind == crd.Kind {
		if err := s.admitCRD(obj); err != nil {
			return nil, err
		}
	}
	stored, obj, err := storedForm(ri, obj.DeepCopyObject())
	if err != nil {
		return nil, err
	}
	out, err := s.write(func(st *store) (runtime.Object, error) { return st.create(stored, obj) })
	return shownForm(ri, out, err)
}

// Update replaces the stored object with a copy of obj. A non-empty
// resourceVersion in obj must match the stored one, or the update fails
// with a Conflict; an empty one updates unconditionally.
func (s *Server) Update(obj runtime.Object) (runtime.Object, error) {
	ri, err := s.reg.forObject(obj)
	if err != nil {
		return nil, err
	}
	stored, obj, err := storedForm(ri, obj.DeepCopyObject())
	if err != nil {
		return nil, err
	}
	out, err := s.write(func(st *store) (runtime.Object, error) { return st.update(stored, obj) })
	return shownForm(ri, out, err)
}

// Delete removes the object with obj's type, namespace and name, at once
// (finalizers are not honoured); then the garbage collector deletes its
// dependents in the background policy's way (gc.go).
func (s *Server) Delete(obj runtime.Object) error {
	ri, err := s.reg.forObject(obj)
	if err != nil {
		return err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Errorf("fakeapi: delete %T: %w", obj, err)
	}
	_, err = s.write(func(st *store) (runtime.Object, error) {
		return st.delete(ri.storedIn(), m.GetNamespace(), m.GetName(), preconditions{})
	})
	return err
}

// write runs one store mutation under the lock and wakes the watches. It
// returns a copy of the result, so callers cannot alter stored state.
func (s *Server) write(apply func(*store) (runtime.Object, error)) (runtime.Object, error) {
	obj, err := s.writeLocked(apply)
	if err != nil {
		return nil, err
	}
	return obj.DeepCopyObject(), nil
}

// writeLocked runs apply under the lock. The deferred unlock keeps the
// server usable even if apply panics on hostile input (the panic becomes a
// 500 further up).
func (s *Server) writeLocked(apply func(*store) (runtime.Object, error)) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	before := s.store.rv
	obj, err := apply(s.store)
	if s.store.rv != before {
		if u, ok := obj.(*unstructured.Unstructured); ok && err == nil && u.GroupVersionKind() == crd.Kind {
			s.syncCRDLocked(u.GetName())
		}
		s.store.collect(s.reg)
		s.notifyLocked()
	}
	return obj, err
}

// notifyLocked wakes every watch waiting for news. s.mu must be held.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Objects returns copies of the current objects of a resource, in key order
// (namespace, then name). Checkers compare a client's cache with it.
func (s *Server) Objects(gvr schema.GroupVersionResource) ([]runtime.Object, error) {
	ri, ok := s.reg.byResource(gvr)
	if !ok || ri.review != nil {
		return nil, fmt.Errorf("%w: %s", ErrNotServed, gvr)
	}
	s.mu.Lock()
	page, err := s.store.list(listQuery{res: ri.storedIn()})
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	out := make([]runtime.Object, len(page.items))
	for i, obj := range page.items {
		if out[i], err = shownForm(ri, obj.DeepCopyObject(), nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DropWatches ends every open watch stream cleanly, as an API server
// restart or a load balancer would. Clients must re-watch. A watch request
// the server has received but not answered yet (held by a fault, or not
// yet scheduled) is ended too, just after its 200: only watches that
// arrive after DropWatches returns stream on.
func (s *Server) DropWatches() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.dropped)
	s.dropped = make(chan struct{})
}

// dropGeneration returns the channel the next DropWatches closes. A watch
// takes it when its request arrives, not when it starts streaming: between
// the two it can be held (by a latency fault, or just by the scheduler),
// and a caller of DropWatches cannot tell such a watch from an open one.
// Taken later, a drop in that window was lost and the watch streamed on,
// unlike on a real server, whose restart ends requests in flight too.
func (s *Server) dropGeneration() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// Compact forgets all history up to the current resourceVersion, like an
// etcd compaction: later watches, exact lists and continue tokens from an
// older RV get 410 Expired.
func (s *Server) Compact() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.store.compact()
}

// Writes returns copies of the recorded writes, in resourceVersion order.
func (s *Server) Writes() []Write {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.store.writes.snapshot()
}

// SentEvents returns the recorded events sent on watch streams, in the
// order they were written.
func (s *Server) SentEvents() []SentEvent { return s.sent.snapshot() }

// limitBody bounds a request's body before any handler reads it: a
// Content-Length over MaxBodyBytes is refused at once with 413 (waiting
// for bytes the server would refuse anyway lets a client hold a handler
// for nothing), the body is cut at MaxBodyBytes whatever its headers said,
// and it must arrive within BodyTimeout.
//
// Why a per-request deadline and not http.Server.ReadTimeout: ReadTimeout
// bounds the whole request on the connection, and the server's background
// read would then cancel the context of every watch still streaming after
// it. The deadline is set only for a request that has a body, and cleared
// once the body is read.
func (s *Server) limitBody(w http.ResponseWriter, r *http.Request) error {
	if r.ContentLength > s.opts.MaxBodyBytes {
		return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", s.opts.MaxBodyBytes))
	}
	body := http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes)
	if r.Body != nil && r.Body != http.NoBody {
		rc := http.NewResponseController(w)
		if err := rc.SetReadDeadline(time.Now().Add(s.opts.BodyTimeout)); err == nil {
			body = &deadlineBody{ReadCloser: body, rc: rc}
		}
	}
	r.Body = body
	return nil
}

// deadlineBody clears the connection's read deadline once the body has
// been read to its end: what follows on the connection is the response,
// and the next request sets its own. A body that failed keeps the
// deadline, so that net/http's drain of the rest fails too and the
// connection is closed instead of waiting for the stalled client.
type deadlineBody struct {
	io.ReadCloser
	rc      *http.ResponseController
	cleared bool // only touched by the handler's goroutine, which reads the body
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.cleared {
		b.cleared = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// errServerClosed ends requests that arrive while the server closes.
var errServerClosed = errors.New("fakeapi: server closed")
