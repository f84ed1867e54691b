package informer

import (
	"context"
	"fmt"
)

// Remove stops the factory's informer called name (the name
// WaitForCacheSync reports it under, and ScopedInformer.Name: "pods",
// "deployments.apps", "pods (metadata)", "pods{namespaces=a,b}") and
// forgets it, leaving every other informer of the factory running. An
// informer of several namespaces (ForScope) is removed whole: every
// namespace's watch. It returns once the informer's
// goroutines have all returned: its watch is closed, its handlers will be
// called no more, and its Done channel is closed, which is how code holding
// the informer (or one of its Registrations) learns that it ended. The
// cache keeps what it held, frozen: stop reading it.
//
// A later For or ForMetadata for the same resource makes a fresh informer,
// with its own list and watch; handlers must be added to that one again.
//
// It returns an error wrapping ErrNoSuchInformer when the factory has no
// informer of that name, and ctx's error if ctx ends first (the informer
// is then still stopping, and already forgotten). Like Shutdown, it must
// not be called from one of the informer's own handlers.
func (f *Factory) Remove(ctx context.Context, name string) error {
	f.mu.Lock()
	e, ok := f.informers[name]
	if ok {
		delete(f.informers, name)
	}
	f.mu.Unlock()
	if !ok {
		return fmt.Errorf("informer: remove %s: %w", name, ErrNoSuchInformer)
	}
	if e.cancel == nil {
		e.inf.retire() // never started: nothing runs, but Done must close
		return nil
	}
	e.cancel()
	select {
	case <-e.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("informer: remove %s: %w", name, ctx.Err())
	}
}
