package informer

import (
	"context"
	"fmt"
	"github.com/seed31a95821/informer/rest"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/indexer"
	"github.com/seed31a95821/informer/reflector"
	"github.com/seed31a95821/informer/reflector/wire"
)

// FactoryOptions scope and tune every informer a Factory makes. The zero
// value watches every namespace with no selector.
type FactoryOptions struct {
	// Namespace limits namespaced resources to one namespace; "" means all.
	// Cluster-scoped resources ignore it.
	Namespace string
	// LabelSelector and FieldSelector are passed to the API server, which
	// filters before sending: the cache holds only matching objects, and so
	// does every lister of this factory. A server that sends others anyway
	// has them refused (reflector.ErrOutOfScope; reflector/scope.go says
	// which parts of a field selector are checked client-side).
	LabelSelector string
	FieldSelector string
	// Scheme maps Go types to kinds and decodes the wire. Nil means
	// apiresource.NewScheme().
	Scheme *runtime.Scheme
	// Resources override how a kind maps to its resource; see Resource.
	Resources []Resource
	// Informer is the template for every informer's Options. Name and
	// Resource are filled in per informer.
	Informer Options
	// ListerWatcher builds the client for one resource. Nil means the HTTP
	// client of reflector/wire, on the factory's one rest.Client. For a
	// dynamic informer (ForDynamic) it must deliver
	// *unstructured.Unstructured.
	// Tests and benchmarks use it to feed informers from memory. It is
	// called with the factory's lock held, once per informer, so it must not
	// call the factory's own methods. Namespace and the selectors above are
	// not passed to it; the reflector checks objects against a scope only
	// if the ListerWatcher declares one (a Scope method, as reflector's
	// ListWatch has).
	ListerWatcher func(r Resource, metadataOnly bool) (reflector.ListerWatcher, error)
}

// Factory hands out one SharedInformer, and so one watch, per resource type:
// every caller asking for pods gets the same informer. It is safe for
// concurrent use.
//
// Unlike client-go's factory, an informer requested after Start is started
// at once, so the order of calls cannot leave one silently idle.
type Factory struct {
	rc    *rest.Client // the connection every informer shares; nil when rcErr is set
	rcErr error        // why the Config did not make a rest.Client
	opts  FactoryOptions

	mu        sync.Mutex         // guards informers, ctx, cancel and shutdown
	informers map[string]*entry  // by resource name, see informerKey
	ctx       context.Context    // set by Start: the context informers run under
	cancel    context.CancelFunc // stops every informer; set by Start
	shutdown  bool
	wg        sync.WaitGroup // one count per running informer

	// stopped is closed by Shutdown: no informer of the factory can sync
	// after it, so WaitForCacheSync stops waiting.
	stopped chan struct{}
}

// runner is what the factory needs of a SharedInformer[T] of any T.
type runner interface {
	Run(ctx context.Context) error
	Synced() <-chan struct{}
	// retire ends an informer that never ran: its Done closes, and Run
	// refuses to start it (Factory.Remove).
	retire()
}

// entry is one informer of the factory and what stops it alone: its own
// context, a child of the factory's, so that Remove can stop one informer
// and leave the others running.
type entry struct {
	inf    runner
	cancel context.CancelFunc // nil until started
	done   chan struct{}      // closed when its Run has returned; nil until started
}

// NewFactory returns a factory whose informers talk to the API server that
// cfg describes, through one rest.Client built here (rest.New): they share
// its connections, its credentials and its client-side rate limit
// (cfg.RateLimiter, or one built from cfg.QPS and cfg.Burst). Requests are
// counted in cfg.Metrics, or, when it is nil, in opts.Informer.Metrics. A
// Config rest.New refuses makes every For fail with rest.New's error.
func NewFactory(cfg rest.Config, opts FactoryOptions) *Factory {
	if opts.Scheme == nil {
		opts.Scheme = apiresource.NewScheme()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = opts.Informer.Metrics
	}
	f := &Factory{opts: opts, informers: map[string]*entry{}, stopped: make(chan struct{})}
	if opts.ListerWatcher == nil {
		f.rc, f.rcErr = rest.New(cfg)
	}
	return f
}

// For returns the factory's informer for objects of type T, such as
// *corev1.Pod, creating it on first use. It refuses, with an error wrapping
// indexer.ErrIndexExists, FactoryOptions.Informer.Indexers that use a
// built-in index's name ("namespace", "labels"), and with
// indexer.ErrNilIndexFunc an index without a function.
func For[T runtime.Object](f *Factory) (*SharedInformer[T], error) {
	if isUnstructured[T]() {
		return nil, fmt.Errorf("informer: an unstructured object names no resource, use ForDynamic: %w", ErrUnknownType)
	}
	obj, err := newObject[T]()
	if err != nil {
		return nil, err
	}
	r, err := resourceFor(f.opts.Scheme, obj, f.opts.Resources)
	if err != nil {
		return nil, err
	}
	return informerFor[T](f, r, false)
}

// ForMetadata returns the factory's metadata-only informer for a resource: it
// caches *metav1.PartialObjectMetadata (names, labels, annotations, owners)
// instead of whole objects, for programs that need no more. The server does
// the trimming, so the memory saved is also bandwidth saved.
func ForMetadata(f *Factory, gvr schema.GroupVersionResource, clusterScoped bool) (*SharedInformer[*metav1.PartialObjectMetadata], error) {
	r := Resource{Kind: gvr.GroupVersion().WithKind("PartialObjectMetadata"), Plural: gvr.Resource, ClusterScoped: clusterScoped}
	return informerFor[*metav1.PartialObjectMetadata](f, r, true)
}

func informerFor[T runtime.Object](f *Factory, r Resource, metadataOnly bool) (*SharedInformer[T], error) {
	key := informerKey(r, metadataOnly)
	dynamic := isUnstructured[T]() // dynamic.go
	if dynamic {
		key += dynamicKeySuffix
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shutdown {
		return nil, ErrFactoryShutDown
	}
	if existing, ok := f.informers[key]; ok {
		inf, ok := existing.inf.(*SharedInformer[T])
		if !ok {
			return nil, fmt.Errorf("informer: %s is already served as %T: %w", key, existing.inf, ErrWrongType)
		}
		return inf, nil
	}
	// An informer whose indexers cannot be set up would never fill its
	// cache: refuse it here, where the caller can still hear why.
	if err := indexer.CheckIndexers(f.opts.Informer.Indexers); err != nil {
		return nil, fmt.Errorf("informer: %s: %w", key, err)
	}
	lw, err := f.listerWatcher(r, metadataOnly, dynamic)
	if err != nil {
		return nil, fmt.Errorf("informer: %s: %w", key, err)
	}
	opts := f.opts.Informer
	opts.Name = key
	opts.Resource = r.GVR().GroupResource()
	inf := New[T](lw, opts)
	e := &entry{inf: inf}
	f.informers[key] = e
	if f.ctx != nil {
		f.startLocked(e)
	}
	return inf, nil
}

func informerKey(r Resource, metadataOnly bool) string {
	key := r.GVR().GroupResource().String()
	if metadataOnly {
		key += " (metadata)"
	}
	return key
}

func (f *Factory) listerWatcher(r Resource, metadataOnly, dynamic bool) (reflector.ListerWatcher, error) {
	if f.opts.ListerWatcher != nil {
		return f.opts.ListerWatcher(r, metadataOnly)
	}
	if f.rcErr != nil {
		return nil, f.rcErr
	}
	return wire.New(f.rc, r, wire.Options{
		Namespace:     f.opts.Namespace,
		LabelSelector: f.opts.LabelSelector,
		FieldSelector: f.opts.FieldSelector,
		Scheme:        f.opts.Scheme,
		MetadataOnly:  metadataOnly,
		Unstructured:  dynamic,
		ShareValues:   dynamic && decodersMayShare(f.opts.Informer.Transform),
	})
}

// Start runs every informer requested so far, and every one requested later,
// until ctx is done or Shutdown is called. It returns at once. Calling it
// again has no effect.
func (f *Factory) Start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ctx != nil || f.shutdown {
		return
	}
	f.ctx, f.cancel = context.WithCancel(ctx)
	for _, e := range f.informers {
		f.startLocked(e)
	}
}

// startLocked runs e under a context of its own, a child of the factory's.
func (f *Factory) startLocked(e *entry) {
	ctx, cancel := context.WithCancel(f.ctx)
	e.cancel, e.done = cancel, make(chan struct{})
	f.wg.Go(func() {
		defer close(e.done)
		defer cancel()
		_ = e.inf.Run(ctx)
	})
}

// WaitForCacheSync blocks until every informer requested so far has synced,
// or ctx is done, or the informers stop (Shutdown, Remove, or the end of the
// context Start was given): an informer that has stopped will never sync. It reports,
// by resource name, which ones synced. It waits on channels, never polling.
func (f *Factory) WaitForCacheSync(ctx context.Context) map[string]bool {
	f.mu.Lock()
	waiting := make(map[string]entry, len(f.informers))
	for k, e := range f.informers {
		waiting[k] = *e // done is nil, so never ready, until started
	}
	var runEnded <-chan struct{} // nil, so never ready, until Start
	if f.ctx != nil {
		runEnded = f.ctx.Done()
	}
	f.mu.Unlock()

	result := make(map[string]bool, len(waiting))
	for k, e := range waiting {
		select {
		case <-e.inf.Synced():
			result[k] = true
			continue
		case <-ctx.Done():
		case <-runEnded:
		case <-f.stopped:
		case <-e.done: // removed, or stopped on its own
		}
		result[k] = isClosed(e.inf.Synced()) // the end may come while others are done
	}
	return result
}

// Shutdown stops every informer the factory started and waits until all
// their goroutines have returned and their idle connections are closed. The factory hands out no informer after it.
// Do not call it from inside a handler: it would wait for the handler's own
// goroutine, which cannot return while it waits. Cancel Start's context
// there instead, and call Shutdown from outside.
func (f *Factory) Shutdown() {
	f.mu.Lock()
	if !f.shutdown {
		close(f.stopped)
	}
	f.shutdown = true
	if f.cancel != nil {
		f.cancel()
	}
	f.mu.Unlock()
	f.wg.Wait()
}
