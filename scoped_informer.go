package informer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer/indexer"
	"github.com/seed31a95821/informer/lister"
	"github.com/seed31a95821/informer/reflector"
)

// ScopedInformer is the informer of one Scope of a factory (ForScope): one
// SharedInformer for each namespace the scope names, each with its own
// watch and its own cache, used as one. For every namespace, or one, or a
// cluster-scoped resource, that is one SharedInformer, and this is a thin
// view of it (Informers has it).
//
// Why one informer per namespace, and not one cache fed by several
// watches: each watch lists and relists on its own, and a relist replaces
// what its cache holds. Sharing one cache, a relist of namespace a would
// have to leave b's objects alone, and the queue, the cache and the
// handlers' replay would all need to know which watch owns which key. Kept
// apart, each namespace is an ordinary informer with every guarantee of
// one, and the merging happens only where a reader looks: the lister and
// the handlers.
//
// It is safe for concurrent use. The objects it hands out are shared, as a
// SharedInformer's are: never modify them.
type ScopedInformer[T runtime.Object] struct {
	name  string
	parts []scopedPart[T] // sorted by namespace
	// synced and done close once every part has synced, and once every
	// part's Run has returned: the part's own with one part, joint's
	// otherwise.
	synced <-chan struct{}
	done   <-chan struct{}
	joint  *joint // nil with one part
}

// scopedPart is the informer of one namespace ("" for all of them).
type scopedPart[T runtime.Object] struct {
	namespace string
	inf       *SharedInformer[T]
}

// newScoped makes the informer called name, with one SharedInformer per
// namespace, each listing and watching through the ListerWatcher lw makes
// for its namespace. Nothing runs until Run.
func newScoped[T runtime.Object](name string, namespaces []string, opts Options, fast fastPaths, lw func(namespace string, d decoders) (reflector.ListerWatcher, error)) (*ScopedInformer[T], error) {
	s := &ScopedInformer[T]{name: name}
	for _, ns := range namespaces {
		o := opts
		o.Name = name
		if len(namespaces) > 1 {
			o.Name = name + " in " + ns // its errors, logs and metrics say which watch
		}
		inf := newInformer[T](o, fast)
		l, err := lw(ns, inf.decoders())
		if err != nil {
			return nil, err
		}
		inf.connect(l)
		s.parts = append(s.parts, scopedPart[T]{namespace: ns, inf: inf})
	}
	if len(s.parts) == 1 {
		return viewOf(name, s.parts[0]), nil
	}
	synced := make([]<-chan struct{}, len(s.parts))
	for i, p := range s.parts {
		synced[i] = p.inf.Synced()
	}
	gate := newSyncGate(synced)
	s.joint = &joint{done: make(chan struct{}), gates: []*syncGate{gate}}
	s.synced, s.done = gate.synced, s.joint.done
	return s, nil
}

// viewOf is the ScopedInformer of a scope that one SharedInformer serves.
// It holds nothing of its own, so a factory can make a fresh one for each
// caller.
func viewOf[T runtime.Object](name string, p scopedPart[T]) *ScopedInformer[T] {
	return &ScopedInformer[T]{name: name, parts: []scopedPart[T]{p}, synced: p.inf.Synced(), done: p.inf.Done()}
}

// runner is what the factory keeps and runs: the one SharedInformer, or,
// for several namespaces, the ScopedInformer that runs them all.
func (s *ScopedInformer[T]) runner() runner {
	if s.joint == nil {
		return s.parts[0].inf
	}
	return s
}

// Name is the informer's name in its factory: what WaitForCacheSync
// reports it under and what Remove takes, such as "pods" for the
// factory's own scope or "pods{namespaces=a,b}" for another.
func (s *ScopedInformer[T]) Name() string { return s.name }

// Informers returns the SharedInformer of each namespace watched, by
// namespace ("" when one watch covers every namespace or the resource is
// cluster-scoped), for what only one cache can answer: its Indexer, its
// Stats, WaitFor. The map is the caller's.
func (s *ScopedInformer[T]) Informers() map[string]*SharedInformer[T] {
	out := make(map[string]*SharedInformer[T], len(s.parts))
	for _, p := range s.parts {
		out[p.namespace] = p.inf
	}
	return out
}

// Lister returns a typed, read-only view of every namespace's cache.
// Namespace(ns) reads ns's cache alone, as cheaply as the lister of one
// SharedInformer; List, Namespace("") and ByIndex read each cache and join
// the answers (lister.NewByNamespace), and a namespace not watched holds
// nothing.
func (s *ScopedInformer[T]) Lister() *lister.Lister[T] {
	if s.joint == nil {
		return s.parts[0].inf.Lister()
	}
	caches := make(map[string]*indexer.Indexer, len(s.parts))
	for _, p := range s.parts {
		caches[p.namespace] = p.inf.Indexer()
	}
	o := s.parts[0].inf.opts
	return lister.NewByNamespace[T](caches, lister.Options{Resource: o.Resource, CopyOnRead: o.CopyOnRead})
}

// AddIndexers adds secondary indexes to every namespace's cache.
func (s *ScopedInformer[T]) AddIndexers(indexers indexer.Indexers) error {
	for _, p := range s.parts {
		if err := p.inf.AddIndexers(indexers); err != nil {
			return fmt.Errorf("informer %s: %w", s.name, err)
		}
	}
	return nil
}

// HasSynced reports whether every namespace's cache holds the full state
// of its first list.
func (s *ScopedInformer[T]) HasSynced() bool { return isClosed(s.synced) }

// Synced returns a channel closed once HasSynced is true.
func (s *ScopedInformer[T]) Synced() <-chan struct{} { return s.synced }

// Done returns a channel closed once every namespace's informer has
// stopped (see SharedInformer.Done).
func (s *ScopedInformer[T]) Done() <-chan struct{} { return s.done }

// Run runs every namespace's informer until ctx is done, and returns once
// all have returned. The factory calls it; a second call returns an error
// wrapping ErrAlreadyRunning, and so does Run of an informer the factory
// already runs.
func (s *ScopedInformer[T]) Run(ctx context.Context) error {
	if s.joint == nil {
		return s.parts[0].inf.Run(ctx)
	}
	runs := make([]func(context.Context) error, len(s.parts))
	for i, p := range s.parts {
		runs[i] = p.inf.Run
	}
	return s.joint.run(ctx, s.name, runs)
}

// retire implements runner: every part is retired.
func (s *ScopedInformer[T]) retire() {
	for _, p := range s.parts {
		p.inf.retire()
	}
	if s.joint != nil {
		s.joint.retire()
	}
}

// AddEventHandler registers h with every namespace's informer, so that it
// hears about changes in all of them (see SharedInformer.AddEventHandler).
// The handler's promise holds across namespaces too: its functions are
// called one at a time, never two at once, though each namespace's
// informer delivers on a goroutine of its own; a slow handler delays only
// itself.
func (s *ScopedInformer[T]) AddEventHandler(h Handler[T], opts HandlerOptions) (*ScopedRegistration, error) {
	if s.joint == nil {
		reg, err := s.parts[0].inf.AddEventHandler(h, opts)
		if err != nil {
			return nil, err
		}
		return &ScopedRegistration{regs: []*Registration{reg}, synced: reg.Synced()}, nil
	}
	h = oneCallAtATime(h)
	regs := make([]*Registration, 0, len(s.parts))
	synced := make([]<-chan struct{}, 0, len(s.parts))
	for _, p := range s.parts {
		reg, err := p.inf.AddEventHandler(h, opts)
		if err != nil {
			for _, r := range regs {
				r.Remove()
			}
			return nil, err
		}
		regs = append(regs, reg)
		synced = append(synced, reg.Synced())
	}
	gate := newSyncGate(synced)
	s.joint.watch(gate)
	return &ScopedRegistration{regs: regs, synced: gate.synced}, nil
}

// oneCallAtATime makes h's functions wait for each other, for a handler
// that several informers call. One object lives in one namespace, so the
// order of its events, which each informer keeps, is kept too.
func oneCallAtATime[T runtime.Object](h Handler[T]) Handler[T] {
	var mu sync.Mutex // guards the calls of h
	out := Handler[T]{}
	if h.OnAdd != nil {
		out.OnAdd = func(obj T, initial bool) { mu.Lock(); defer mu.Unlock(); h.OnAdd(obj, initial) }
	}
	if h.OnUpdate != nil {
		out.OnUpdate = func(old, cur T) { mu.Lock(); defer mu.Unlock(); h.OnUpdate(old, cur) }
	}
	if h.OnDelete != nil {
		out.OnDelete = func(obj T, unknown bool) { mu.Lock(); defer mu.Unlock(); h.OnDelete(obj, unknown) }
	}
	return out
}

// ScopedRegistration is the handle ScopedInformer.AddEventHandler returns:
// one Registration per namespace's informer, seen as one. It is safe for
// concurrent use.
type ScopedRegistration struct {
	regs   []*Registration
	synced <-chan struct{}
}

// Registrations returns the registration with each namespace's informer,
// for their Stats.
func (r *ScopedRegistration) Registrations() []*Registration { return slices.Clone(r.regs) }

// HasSynced reports whether the handler has handled the initial state of
// every namespace.
func (r *ScopedRegistration) HasSynced() bool { return isClosed(r.synced) }

// Synced returns a channel closed once HasSynced is true. Like a
// Registration's, it never closes for a handler removed before it synced.
func (r *ScopedRegistration) Synced() <-chan struct{} { return r.synced }

// Remove unregisters the handler from every namespace's informer, and
// returns once none of them will call it again, or with ctx's error when
// ctx ends first. Do not call it from inside the handler.
func (r *ScopedRegistration) Remove(ctx context.Context) error {
	done := make([]<-chan struct{}, len(r.regs))
	for i, reg := range r.regs {
		done[i] = reg.Remove()
	}
	for _, d := range done {
		select {
		case <-d:
		case <-ctx.Done():
			return fmt.Errorf("informer: remove handler: %w", ctx.Err())
		}
	}
	return nil
}

// syncGate closes synced once every channel of its set has closed: the
// merged "synced" of several informers, or of a handler's registrations
// with them. Closing it takes a goroutine to wait (a channel closes only
// when someone closes it), and that goroutine is joint's, started by Run.
type syncGate struct {
	of     []<-chan struct{}
	synced chan struct{}
}

func newSyncGate(of []<-chan struct{}) *syncGate {
	return &syncGate{of: of, synced: make(chan struct{})}
}

// wait closes g.synced once all of g.of have closed, unless ctx ends
// first.
func (g *syncGate) wait(ctx context.Context) {
	for _, ch := range g.of {
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
	close(g.synced)
}

// joint is what a ScopedInformer of several namespaces keeps to be used as
// one informer: the channel that says all have stopped, and the sync gates
// of the informer and of each handler, whose goroutines its run starts and
// waits for.
type joint struct {
	done chan struct{} // closed when run returns, or by retire

	mu      sync.Mutex // guards started, ctx, ended and gates
	started bool       // run was called, or retire
	ctx     context.Context
	ended   bool        // run no longer starts gates' goroutines
	gates   []*syncGate // made before run, for run to start
	wg      sync.WaitGroup
}

// run runs every part until ctx ends, and the sync gates' goroutines
// alongside, and returns the parts' errors once all have returned.
func (j *joint) run(ctx context.Context, name string, runs []func(context.Context) error) error {
	j.mu.Lock()
	if j.started {
		j.mu.Unlock()
		return fmt.Errorf("informer %s: %w", name, ErrAlreadyRunning)
	}
	j.started = true
	defer close(j.done)
	// The gates stop when the parts have: a part that could not start
	// will never sync, and its gate must not keep Run waiting.
	gateCtx, stopGates := context.WithCancel(ctx)
	defer stopGates()
	j.ctx = gateCtx
	for _, g := range j.gates {
		j.wg.Go(func() { g.wait(gateCtx) })
	}
	j.gates = nil
	j.mu.Unlock()

	errs := make([]error, len(runs))
	var wg sync.WaitGroup
	for i, run := range runs {
		wg.Go(func() { errs[i] = run(ctx) })
	}
	wg.Wait()
	stopGates()
	j.mu.Lock()
	j.ended = true
	j.mu.Unlock()
	j.wg.Wait()
	return errors.Join(errs...)
}

// watch has g closed once its channels have: by a goroutine of run's, now
// if run is running, or when it starts. A gate made after run has ended
// never closes, as nothing it waits for will.
func (j *joint) watch(g *syncGate) {
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case j.ended:
	case j.started:
		ctx := j.ctx
		j.wg.Go(func() { g.wait(ctx) })
	default:
		j.gates = append(j.gates, g)
	}
}

// retire ends a joint whose run was never called: Done closes, and run
// refuses to start.
func (j *joint) retire() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.started {
		j.started, j.ended, j.gates = true, true, nil
		close(j.done)
	}
}
