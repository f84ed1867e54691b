package informer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer/deltafifo"
	"github.com/seed31a95821/informer/indexer"
	"github.com/seed31a95821/informer/internal/reuse"
	"github.com/seed31a95821/informer/internal/share"
	"github.com/seed31a95821/informer/lister"
	"github.com/seed31a95821/informer/metrics"
	"github.com/seed31a95821/informer/processor"
	"github.com/seed31a95821/informer/reflector"
)

// Options configure a SharedInformer. The zero value is ready to use.
type Options struct {
	// Name labels the informer in errors and statistics, for example "pods".
	Name string
	// Resource names the resource in the lister's NotFound errors.
	Resource schema.GroupResource
	// Indexers are extra secondary indexes, on top of the namespace and label
	// indexes every informer has. More can be added later with AddIndexers.
	// A name the built-ins have (indexer.NamespaceIndex "namespace",
	// indexer.LabelIndex "labels") is refused: by the Factory when the
	// informer is requested, and by Run for an informer made with New (see
	// Run). The built-in "namespace" index is client-go's usual
	// MetaNamespaceIndexFunc already; leave that definition out.
	Indexers indexer.Indexers
	// Transform rewrites each object once, as it enters the queue and before
	// it is cached: a place to drop fields the program never reads (see
	// Transform, and StripManagedFields). The zero value rewrites nothing.
	Transform Transform
	// AtomicRelist makes a relist land in the cache as one swap: readers see
	// either the old state or the new one, never a mixture, and handlers hear
	// about the deletions first. The default applies a relist key by key, as
	// client-go does.
	AtomicRelist bool
	// KeepAllUpdates makes the queue keep every update of an object that
	// waits to be processed, instead of only the newest, and makes every
	// handler keep every notification too (HandlerOptions.KeepAllUpdates).
	// Handlers then see every version the watch reported, and a stalled
	// consumer or handler costs memory in proportion to events instead of
	// objects. See deltafifo's doc and docs/reliability.md.
	KeepAllUpdates bool
	// CopyOnRead makes the lister deep-copy every object it returns: safer,
	// and slower. Off by default, as in client-go.
	CopyOnRead bool
	// OnError receives every error the informer recovers from: watch
	// failures, objects it could not cache, handler panics. The informer keeps
	// running after each. Nil writes them to Logger.
	//
	// It is called on the informer's own goroutines (the reflector's, the
	// queue consumer's, each handler's), several at a time, and sometimes
	// while the informer holds the lock that orders the cache and the
	// handlers. So it must be safe for concurrent use, return quickly, and
	// not call the informer (AddEventHandler would wait for that lock):
	// log the error, count it, or hand it to a goroutine of your own.
	OnError func(error)
	// Logger receives the informer's log lines, with structured keys
	// (informer, resource, resourceVersion, error, error_kind, and
	// namespace and name where an error names an object). Nil means
	// slog.Default(). A logr.Logger user passes
	// slog.New(logr.ToSlogHandler(logger)).
	Logger *slog.Logger
	// Metrics, when set, receives the informer's figures (informer_* in
	// metrics/names.go: lists, watches, relists, events, errors, the
	// resourceVersion reached, whether it has synced, and each handler's lag
	// and counts) while Run runs, and the rest_client_* figures of the
	// ListerWatcher a Factory builds for it. They are read from Stats when
	// the registry is gathered: nothing is added to the event path.
	Metrics *metrics.Registry
	// Reflector tunes the list-and-watch machinery: page size, backoff,
	// WatchList, the watchdog. It holds only what the informer
	// leaves to its user; see ReflectorOptions.
	Reflector ReflectorOptions
}

// resyncTick is how often the reflector's resync timer asks the processor
// whether any handler is due (processor.ShouldResync decides): a fixed tick,
// the finest period a handler can have, because the timer is set once and
// handlers with their own periods come and go afterwards. The whole path is
// told in docs/architecture.md, "Resync".
const resyncTick = processor.MinResyncPeriod

// SharedInformer keeps an in-memory copy of one resource, kept current by a
// single list-and-watch, and tells any number of handlers about every change.
//
// It wires the pipeline: reflector -> deltafifo.Queue -> indexer.Indexer and
// processor.Processor. It is safe for concurrent use. Objects it hands out,
// through handlers, the lister or the indexer, are shared with every other
// reader, and cached objects share the strings, maps and byte slices they
// hold in equal copies with each other (internal/share): never modify them.
type SharedInformer[T runtime.Object] struct {
	opts  Options
	idx   *indexer.Indexer
	queue *deltafifo.Queue
	proc  *processor.Processor
	refl  *reflector.Reflector
	lw    reflector.ListerWatcher

	// The fast paths of relist_reuse.go, set by newInformer.
	reuse         *reuse.Cache // the cache as a relist sees it; nil when off
	shared        *share.Table // what cached objects share
	decodersShare bool         // the decoders share, not the queue's Transform

	// mu is held while a batch of deltas is applied to the cache and
	// distributed, and while a handler is added. That is what makes the
	// snapshot a late handler replays agree exactly with the stream it
	// receives afterwards: no change can fall between the two.
	mu sync.Mutex

	synced     chan struct{} // closed once the first full state is cached
	syncedOnce sync.Once
	done       chan struct{} // closed when Run has returned (Done)

	// setupErr is why the informer cannot run (indexers New could not set
	// up): Run reports it and returns, and the informer never syncs.
	setupErr error
	// unfilled holds the keys of the first state that the cache failed to
	// take (an index function failed, say), until a later write of the key
	// or a whole relist lands; guarded by mu. unfilledN is its size, read
	// without mu by markSyncedIfReady: while it is not zero the informer
	// does not say it has synced.
	unfilled  map[string]struct{}
	unfilledN atomic.Int64

	fresh freshness // how far the cache has got (freshness.go)

	runMu   sync.Mutex // guards running
	running bool       // Run may be called only once
}

// New builds a SharedInformer that lists and watches through lw. Nothing
// happens until Run.
//
// An informer a Factory makes has two fast paths more: the Factory builds
// its ListerWatcher, and wires the decoders to the cache (a relist keeps
// the objects the cache holds unchanged; equal maps are shared as they are
// decoded). New cannot do that for a ListerWatcher built elsewhere.
func New[T runtime.Object](lw reflector.ListerWatcher, opts Options) *SharedInformer[T] {
	s := newInformer[T](opts, allFastPaths())
	s.connect(lw)
	return s
}

// fastPaths switch the informer's optimisations, each in a file of its
// own whose header says how to delete it. New and NewFactory turn every
// one on; a test turns one off to see the informer behave the same
// without it.
type fastPaths struct {
	inline    bool // inline.go: an event that finds the consumer idle is applied at once
	cacheKeys bool // key_intern.go: the queue names objects with the cache's key strings
	relist    bool // relist_reuse.go: a relist keeps the objects the cache holds unchanged
	// decodeShare (relist_reuse.go): equal maps and byte slices are shared
	// as objects are decoded, when the Transform leaves them alone, rather
	// than after the Transform.
	decodeShare bool
}

func allFastPaths() fastPaths {
	return fastPaths{inline: true, cacheKeys: true, relist: true, decodeShare: true}
}

// newInformer builds the informer's cache, queue and processor, with the
// fast paths fast turns on. connect adds the reflector.
func newInformer[T runtime.Object](opts Options, fast fastPaths) *SharedInformer[T] {
	s := &SharedInformer[T]{opts: opts, synced: make(chan struct{}), done: make(chan struct{})}
	if err := indexer.CheckIndexers(opts.Indexers); err != nil {
		s.setupErr = fmt.Errorf("informer %s: %w", opts.Name, err)
	}
	s.idx = indexer.New(opts.Indexers)
	s.proc = processor.New(processor.Options{OnError: s.report})
	s.shared = new(share.Table)
	s.decodersShare = fast.decodeShare && (opts.Transform.Func == nil || opts.Transform.SetsFieldsOnly)
	if fast.relist {
		s.reuse = reuse.New(s.idx.Get, s.idx.Len)
	}
	qo := deltafifo.Options{
		KnownObjects:   s.idx,
		Transform:      s.admitTransform(opts.Transform.Func), // relist_reuse.go
		AtomicRelist:   opts.AtomicRelist,
		KeepAllUpdates: opts.KeepAllUpdates,
	}
	if fast.cacheKeys {
		qo.KeyFunc = s.key // key_intern.go
	}
	if fast.inline {
		qo.Inline, qo.InlineIf = s.apply, s.inlineIf // inline.go
	}
	s.queue = deltafifo.New(qo)
	return s
}

// connect gives the informer its reflector, which lists and watches
// through lw and writes to the queue.
func (s *SharedInformer[T]) connect(lw reflector.ListerWatcher) {
	s.lw = lw
	ro := reflector.Options{Tunables: s.opts.Reflector}
	ro.Name = s.opts.Name
	if proto, err := newObject[T](); err == nil {
		ro.ExpectedType = proto
	}
	ro.ResyncPeriod = resyncTick
	ro.ShouldResync = func() bool { return s.proc.ShouldResync(time.Now()) }
	ro.OnError = s.report
	s.refl = reflector.New(lw, syncWatchingStore{Queue: s.queue, informer: s}, ro)
}

// Run starts the pipeline and blocks until ctx is done and every goroutine
// the informer started has stopped, and the idle connections of its
// ListerWatcher are closed. It may be called once; a second call
// returns ErrAlreadyRunning.
//
// An informer whose Options.Indexers could not be set up (a built-in's
// name, or a nil function) cannot fill its cache: Run reports that error
// once to OnError and returns it at once, wrapping
// indexer.ErrIndexExists or indexer.ErrNilIndexFunc, and the informer
// never syncs.
func (s *SharedInformer[T]) Run(ctx context.Context) error {
	s.runMu.Lock()
	if s.running {
		s.runMu.Unlock()
		return fmt.Errorf("informer %s: %w", s.opts.Name, ErrAlreadyRunning)
	}
	s.running = true
	s.runMu.Unlock()
	defer close(s.done)
	if s.setupErr != nil {
		s.report(s.setupErr)
		return s.setupErr
	}
	defer s.opts.Metrics.Register(s.collector())() // metrics.go

	var wg sync.WaitGroup
	wg.Go(func() { s.proc.Run(ctx) })
	wg.Go(func() { s.consume(ctx) })
	wg.Go(func() {
		if err := s.refl.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
			s.report(fmt.Errorf("informer %s: reflector stopped: %w", s.opts.Name, err))
		}
	})
	<-ctx.Done()
	// Closing the queue releases the consumer if it is waiting in Pop.
	s.queue.Close()
	wg.Wait()
	s.fresh.stopClock() // freshness_clock.go
	closeIdleConnections(s.lw)
	return nil
}

// consumeBatchLen is the most keys the consumer pops and applies at once.
// A batch is applied under one hold of the informer's lock and of the
// cache's write lock, and costs one Pop: behind a backlog, those per-call
// costs are paid once per batch instead of once per key. It is kept well
// below client-go's 1000 because a late AddEventHandler waits for the batch
// in progress.
const consumeBatchLen = 64

// idleCloser is a ListerWatcher that keeps connections open between
// requests, such as wire.ListerWatcher.
type idleCloser interface{ CloseIdleConnections() }

// closeIdleConnections closes the keep-alive connections lw's last
// requests left open, if it keeps any: without it they, and the
// transport's goroutines serving them, outlive the informer until the
// server drops them or 90s pass.
func closeIdleConnections(lw reflector.ListerWatcher) {
	if c, ok := lw.(idleCloser); ok {
		c.CloseIdleConnections()
	}
}

// consume is the informer's one consumer goroutine: it pops batches of deltas
// and applies them, until the queue is closed.
func (s *SharedInformer[T]) consume(ctx context.Context) {
	for {
		err := s.queue.PopBatch(ctx, consumeBatchLen, s.apply)
		if errors.Is(err, deltafifo.ErrClosed) || ctx.Err() != nil {
			return
		}
		if err != nil {
			s.report(fmt.Errorf("informer %s: %w", s.opts.Name, err))
		}
		s.markSyncedIfReady()
		s.advanceApplied()
	}
}

// markSyncedIfReady records the moment the cache first holds a full state.
// The queue decides that (every item of the first Replace processed); this
// informer only reacts once, by telling the processor, which then lets each
// handler's HasSynced turn true after it has handled its initial adds.
//
// A first state the cache failed to take in full is no full state: while
// any of its keys is unfilled, the informer has not synced.
func (s *SharedInformer[T]) markSyncedIfReady() {
	if !s.queue.HasSynced() || s.unfilledN.Load() != 0 {
		return
	}
	s.syncedOnce.Do(func() {
		s.proc.MarkSynced()
		close(s.synced)
	})
}

// AddEventHandler registers h. Handlers may be added at any time: one added
// while the informer runs first receives the current contents of the cache as
// OnAdd(obj, true), then every later change, without pausing the pipeline
// while it catches up.
func (s *SharedInformer[T]) AddEventHandler(h Handler[T], opts HandlerOptions) (*Registration, error) {
	d := dispatch[T]{h: h, filter: opts.UpdateFilter, report: s.report}
	s.mu.Lock()
	defer s.mu.Unlock()
	// The snapshot is an O(1) freeze of the cache's current version, taken
	// while no batch is being applied, so it joins the stream exactly. The
	// handler's goroutine reads it later, at its own pace.
	reg, err := s.proc.AddHandler(d, processor.HandlerOptions{
		Name: opts.Name, ResyncPeriod: opts.ResyncPeriod,
		// An informer that keeps every update in its queue promises its
		// handlers every version: it keeps them in their backlogs too.
		BacklogLimit: opts.BacklogLimit, KeepAllUpdates: opts.KeepAllUpdates || s.opts.KeepAllUpdates,
	}, s.idx.Freeze())
	if err != nil {
		return nil, fmt.Errorf("informer %s: add handler: %w", s.opts.Name, err)
	}
	return reg, nil
}

// Registration is the handle AddEventHandler returns: the handler's own
// HasSynced, its statistics, and Remove.
type Registration = processor.Registration

// HasSynced reports whether the cache holds the full state of the first list.
// Until then a lister may answer "not found" for objects that exist.
func (s *SharedInformer[T]) HasSynced() bool { return isClosed(s.synced) }

// Synced returns a channel closed once HasSynced is true: wait on it instead
// of polling.
func (s *SharedInformer[T]) Synced() <-chan struct{} { return s.synced }

// Done returns a channel closed when Run has returned: the informer was
// stopped (its context ended, or Factory.Remove or Shutdown stopped it) and
// none of its handlers will be called again. Its cache keeps what it held,
// no longer kept current.
func (s *SharedInformer[T]) Done() <-chan struct{} { return s.done }

// retire ends an informer that never ran (a factory removed it before
// Start): Done closes, so that whoever waits on it is told, and a later
// Run returns ErrAlreadyRunning. An informer that did run is left alone:
// its Run closes Done.
func (s *SharedInformer[T]) retire() {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	if !s.running {
		s.running = true
		close(s.done)
	}
}

// Lister returns a typed, read-only view of the cache.
func (s *SharedInformer[T]) Lister() *lister.Lister[T] {
	return lister.New[T](s.idx, lister.Options{Resource: s.opts.Resource, CopyOnRead: s.opts.CopyOnRead})
}

// Indexer returns the cache itself, for index queries the lister does not
// offer. Objects it returns are shared: never modify them.
func (s *SharedInformer[T]) Indexer() *indexer.Indexer { return s.idx }

// AddIndexers adds secondary indexes; existing objects are indexed at once.
func (s *SharedInformer[T]) AddIndexers(indexers indexer.Indexers) error {
	return s.idx.AddIndexers(indexers)
}

// LastSyncResourceVersion is the resourceVersion of the last list or watch
// event the reflector handed to the queue.
func (s *SharedInformer[T]) LastSyncResourceVersion() string {
	return s.refl.LastSyncResourceVersion()
}

// Stats returns the reflector's counters: lists, watches, events, errors.
func (s *SharedInformer[T]) Stats() reflector.Stats { return s.refl.Stats() }

// QueueStats returns the queue's depth and the age of its oldest item: how far
// the cache is behind the watch.
func (s *SharedInformer[T]) QueueStats() deltafifo.Stats { return s.queue.Stats() }

func (s *SharedInformer[T]) report(err error) {
	if s.opts.OnError != nil {
		s.opts.OnError(err)
		return
	}
	s.logError(err) // log_attrs.go
}

// syncWatchingStore is the queue as the reflector sees it. Its addition:
// after a Replace it checks whether the informer has synced, because the
// first list may be empty, and then no item is ever popped that would let the
// consumer notice; Add, Update and Delete check too, for a write the queue
// applied inline (inline.go).
//
// It also tells the informer the resourceVersion each accepted write
// carried, for WaitFor (freshness.go).
type syncWatchingStore struct {
	*deltafifo.Queue
	informer writeFollower
}

// writeFollower is the informer as syncWatchingStore sees it: one call
// after each write, on the reflector's goroutine (for a watch event, one
// interface call rather than two closures).
type writeFollower interface {
	// wrote follows a write to the queue that returned err: it hands the
	// write's resourceVersion on if the queue took it (handed), and checks
	// for a sync (markSyncedIfReady).
	wrote(err error, rv string, replace bool)
}

// Replace implements reflector.Store.
func (w syncWatchingStore) Replace(list []runtime.Object, resourceVersion string) error {
	err := w.Queue.Replace(list, resourceVersion)
	w.wrote(err, resourceVersion, true)
	return err
}

// Bookmark implements reflector.Store: progress without an object.
func (w syncWatchingStore) Bookmark(resourceVersion string) error {
	err := w.Queue.Bookmark(resourceVersion)
	w.wrote(err, resourceVersion, false)
	return err
}

// wrote follows a write to the queue: see writeFollower.
func (w syncWatchingStore) wrote(err error, rv string, replace bool) {
	w.informer.wrote(err, rv, replace)
}

// wrote implements writeFollower.
func (s *SharedInformer[T]) wrote(err error, rv string, replace bool) {
	if err == nil {
		s.handed(rv, replace)
	}
	s.markSyncedIfReady()
}
