package leaderelection

import (
	"context"
	"sync"
)

// Gate is where a warm standby's workers wait for leadership. Every
// replica starts its informers and lets them sync; only the workers pass
// through the gate, and only during a term. On takeover the new leader's
// workers find a cache that is already warm and reconcile at once: no
// list, no relist.
//
//	elector := leaderelection.New(leaderelection.Options{..., Callbacks: leaderelection.Callbacks{OnStartedLeading: gate.Lead}})
//	worker:  for { term, leave, err := gate.Enter(ctx); if err != nil { return }; work(term); leave() }
//	or:      loop := &reconcile.Loop{Queue: q, Reconcile: r, Gate: &gate} // Admit is Enter per key
//
// Lead holds a term open until its context ends and every worker that
// entered has left, so the Elector starts no new term, and releases no
// lease, while a reconcile of the old term is still running. The zero
// value is a closed gate, ready to use; it is safe for concurrent use.
type Gate struct {
	mu sync.Mutex // guards term, opened, inside and left
	// term is the open term's context; nil while closed.
	term context.Context
	// opened is what a waiting worker waits on: it is closed when the next
	// term opens, and nil (made by openedLocked) until someone waits. A
	// term that opens forgets it at once, so a worker that finds the term
	// ended (its context done before Lead has closed the gate) waits for
	// the term after, not on the channel of the term just gone.
	opened chan struct{}
	// inside counts workers in the open term; left is closed when the
	// term is over and the last one left.
	inside int
	left   chan struct{}
}

func (g *Gate) openedLocked() chan struct{} {
	if g.opened == nil {
		g.opened = make(chan struct{})
	}
	return g.opened
}

// Lead opens the gate for the term of ctx and returns once ctx is done and
// every worker that entered has left. It is an OnStartedLeading callback.
func (g *Gate) Lead(ctx context.Context) {
	g.mu.Lock()
	g.term = ctx
	g.left = make(chan struct{})
	close(g.openedLocked())
	g.opened = nil
	g.mu.Unlock()

	<-ctx.Done()

	g.mu.Lock()
	g.term = nil
	left := g.left
	if g.inside == 0 {
		close(left)
	}
	g.mu.Unlock()
	<-left
}

// Enter waits until the gate is open and returns the term's context, which
// ends with the term, and leave, which the worker must call once it has
// stopped working under that context. It fails only when ctx is done.
func (g *Gate) Enter(ctx context.Context) (context.Context, func(), error) {
	for {
		g.mu.Lock()
		if term := g.term; term != nil && term.Err() == nil {
			g.inside++
			left := g.left
			g.mu.Unlock()
			var once sync.Once
			return term, func() { once.Do(func() { g.leave(term, left) }) }, nil
		}
		opened := g.openedLocked()
		g.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-opened:
		}
	}
}

// Admit is Enter for one key of a reconcile.Loop (it is a reconcile.Gate,
// so a Loop plugs in with Gate: &gate): every key waits for a term and is
// reconciled under it, and the term's Lead waits for that reconcile.
func (g *Gate) Admit(ctx context.Context, _ string) (term context.Context, leave func(), ok bool, err error) {
	term, leave, err = g.Enter(ctx)
	return term, leave, err == nil, err
}

func (g *Gate) leave(term context.Context, left chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inside--
	if g.inside == 0 && g.term != term {
		close(left) // the term is over and this was the last worker in it
	}
}

// Leading tells whether the gate is open.
func (g *Gate) Leading() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.term != nil && g.term.Err() == nil
}
