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
	"github.com/seed31a95821/informer/discovery"
	"github.com/seed31a95821/informer/indexer"
	"github.com/seed31a95821/informer/reflector"
	"github.com/seed31a95821/informer/reflector/wire"
)

// FactoryOptions scope and tune every informer a Factory makes. The zero
// value watches every namespace with no selector.
type FactoryOptions struct {
	// Namespace limits namespaced resources to one namespace; "" means all.
	// Cluster-scoped resources ignore it. It and the selectors below are
	// the factory's own scope, the one For uses; ForScope asks for others
	// (several namespaces, other selectors) from the same factory.
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
	// Resources override where a kind lives: an entry for a kind always
	// wins over the server's discovery (Factory.resolve).
	Resources []Resource
	// Discovery tunes the factory's reading of the server's discovery
	// documents (how soon a kind not found may read them again); the zero
	// value is package discovery's defaults.
	Discovery discovery.Options
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
	// ListWatch has). So ForScope refuses, with ErrInvalidScope, a scope
	// other than the factory's own when it is set.
	ListerWatcher func(r Resource, metadataOnly bool) (reflector.ListerWatcher, error)
}

// Factory hands out one SharedInformer, and so one watch, per resource type
// and scope: every caller asking for pods gets the same informer. A Scope
// (ForScope) of several namespaces is one informer with one watch per
// namespace. It is safe for concurrent use.
//
// Unlike client-go's factory, an informer requested after Start is started
// at once, so the order of calls cannot leave one silently idle.
type Factory struct {
	rc    *rest.Client // the connection every informer shares; nil when rcErr is set
	rcErr error        // why the Config did not make a rest.Client
	opts  FactoryOptions
	fast  fastPaths // every one on; a test may switch one off before For
	// resolver finds each type's resource (resolve); its Discovery reads
	// through rc, and is nil when there is no rc.
	resolver discovery.Resolver

	mu        sync.Mutex         // guards informers, ctx, cancel and shutdown
	informers map[string]*entry  // by name: resource and scope, see scopedKey
	ctx       context.Context    // set by Start: the context informers run under
	cancel    context.CancelFunc // stops every informer; set by Start
	shutdown  bool
	wg        sync.WaitGroup // one count per running informer

	// stopped is closed by Shutdown: no informer of the factory can sync
	// after it, so WaitForCacheSync stops waiting.
	stopped chan struct{}
}

// runner is what the factory needs of a SharedInformer[T] of any T, or of
// a ScopedInformer[T] of several namespaces.
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
	f := &Factory{opts: opts, fast: allFastPaths(), informers: map[string]*entry{}, stopped: make(chan struct{})}
	f.resolver.Overrides = opts.Resources
	if opts.ListerWatcher == nil {
		f.rc, f.rcErr = rest.New(cfg)
	}
	if f.rc != nil {
		f.resolver.Discovery = discovery.New(f.rc, opts.Discovery)
	}
	return f
}

// For returns the factory's informer for objects of type T, such as
// *corev1.Pod, creating it on first use. T's resource is found by
// Factory.resolve; the first call reads the server's discovery documents
// (bounded by discovery.DefaultTimeout), later ones reuse them. It
// refuses, with an error wrapping indexer.ErrIndexExists,
// FactoryOptions.Informer.Indexers that use a built-in index's name
// ("namespace", "labels"), with indexer.ErrNilIndexFunc an index without
// a function, and, with an error for which meta.IsNoMatchError is true, a
// kind the server's discovery does not list.
func For[T runtime.Object](f *Factory) (*SharedInformer[T], error) {
	r, err := resourceOf[T](f)
	if err != nil {
		return nil, err
	}
	return informerFor[T](f, r, false)
}

// resourceOf finds where T's kind lives (resolve), for For and ForScope.
// An unstructured T names no kind: ForDynamic is for those.
func resourceOf[T runtime.Object](f *Factory) (Resource, error) {
	if isUnstructured[T]() {
		return Resource{}, fmt.Errorf("informer: an unstructured object names no resource, use ForDynamic: %w", ErrUnknownType)
	}
	obj, err := newObject[T]()
	if err != nil {
		return Resource{}, err
	}
	r, err := f.resolve(obj)
	if err != nil {
		return Resource{}, fmt.Errorf("informer: %w", err)
	}
	return r, nil
}

// resolve finds where obj's kind lives, by the module's one rule
// (discovery.Resolver): FactoryOptions.Resources, then the server's
// discovery, then, only when discovery cannot be read or there is no
// server (FactoryOptions.ListerWatcher), apiresource.Guess.
func (f *Factory) resolve(obj runtime.Object) (Resource, error) {
	return ResourceFor(context.Background(), f.opts.Scheme, obj, f.resolver)
}

// Discovery returns the factory's discovery client (what the server
// serves, and its REST mapper), or nil when the factory has no server to
// ask (FactoryOptions.ListerWatcher, or a Config rest.New refused).
func (f *Factory) Discovery() *discovery.Client { return f.resolver.Discovery }

// ForMetadata returns the factory's metadata-only informer for a resource: it
// caches *metav1.PartialObjectMetadata (names, labels, annotations, owners)
// instead of whole objects, for programs that need no more. The server does
// the trimming, so the memory saved is also bandwidth saved.
func ForMetadata(f *Factory, gvr schema.GroupVersionResource, clusterScoped bool) (*SharedInformer[*metav1.PartialObjectMetadata], error) {
	r := Resource{Kind: gvr.GroupVersion().WithKind("PartialObjectMetadata"), Plural: gvr.Resource, ClusterScoped: clusterScoped}
	return informerFor[*metav1.PartialObjectMetadata](f, r, true)
}

func informerFor[T runtime.Object](f *Factory, r Resource, metadataOnly bool) (*SharedInformer[T], error) {
	s, err := scopedFor[T](f, r, metadataOnly, Scope{})
	if err != nil {
		return nil, err
	}
	return s.parts[0].inf, nil // the factory's own scope has one namespace at most
}

// scopedFor returns the factory's informer of T for r in scope, making it
// on first use. Its key, and name, is the resource and the scope's
// selection (scope.go): one informer per selection; a dynamic informer
// (dynamic.go) is another than a typed one of the same selection.
func scopedFor[T runtime.Object](f *Factory, r Resource, metadataOnly bool, scope Scope) (*ScopedInformer[T], error) {
	sel, err := f.selectionOf(r, scope)
	if err != nil {
		return nil, fmt.Errorf("informer: %s: %w", informerKey(r, metadataOnly), err)
	}
	key := f.scopedKey(r, metadataOnly, sel)
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
		switch inf := existing.inf.(type) {
		case *SharedInformer[T]:
			return viewOf(key, scopedPart[T]{namespace: sel.namespaces[0], inf: inf}), nil
		case *ScopedInformer[T]:
			return inf, nil
		}
		return nil, fmt.Errorf("informer: %s is already served as %T: %w", key, existing.inf, ErrWrongType)
	}
	opts := f.opts.Informer
	if scope.Transform.Func != nil {
		opts.Transform = scope.Transform
	}
	if scope.Indexers != nil {
		opts.Indexers = scope.Indexers
	}
	// An informer whose indexers cannot be set up would never fill its
	// cache: refuse it here, where the caller can still hear why.
	if err := indexer.CheckIndexers(opts.Indexers); err != nil {
		return nil, fmt.Errorf("informer: %s: %w", key, err)
	}
	opts.Resource = r.GVR().GroupResource()
	// Each namespace's informer, then its ListerWatcher, whose decoders are
	// wired to that informer's cache (relist_reuse.go), then the reflector
	// between (newScoped).
	inf, err := newScoped[T](key, sel.namespaces, opts, f.fast, func(ns string, d decoders) (reflector.ListerWatcher, error) {
		return f.listerWatcher(r, metadataOnly, dynamic, sel.in(ns), d)
	})
	if err != nil {
		return nil, fmt.Errorf("informer: %s: %w", key, err)
	}
	e := &entry{inf: inf.runner()}
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

// listerWatcher builds the client of one watch: r, in the namespace and
// with the selectors of ws, decoded as unstructured objects when dynamic;
// the caller's (FactoryOptions.ListerWatcher), or reflector/wire's with the
// informer's decoders d.
func (f *Factory) listerWatcher(r Resource, metadataOnly, dynamic bool, ws wireScope, d decoders) (reflector.ListerWatcher, error) {
	if f.opts.ListerWatcher != nil {
		// It is told no scope: it can serve only the factory's own.
		if own := f.ownSelection(r); own.in(own.namespaces[0]) != ws {
			return nil, fmt.Errorf("%w: FactoryOptions.ListerWatcher serves the factory's scope only", ErrInvalidScope)
		}
		return f.opts.ListerWatcher(r, metadataOnly)
	}
	if f.rcErr != nil {
		return nil, f.rcErr
	}
	return wire.New(f.rc, r, wire.Options{
		Namespace:     ws.namespace,
		LabelSelector: ws.labelSelector,
		FieldSelector: ws.fieldSelector,
		Scheme:        f.opts.Scheme,
		MetadataOnly:  metadataOnly,
		Relist:        d.relist,
		Decoded:       d.decoded,
		// The decoders skip what the Transform would drop.
		DropManagedFields: d.dropManagedFields,
		ShareParts:        d.shareParts,
		PodParts:          d.parts,
		Unstructured:      dynamic,
		// Unstructured objects share equal small maps and slices as they
		// are decoded on the same condition as typed ones (decoders).
		ShareValues: dynamic && d.decoded != nil,
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
	if f.rc != nil { // discovery's connections, which no informer closes
		f.rc.CloseIdleConnections()
	}
}
