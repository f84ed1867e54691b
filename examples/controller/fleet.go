package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/seed31a95821/informer/client"
	"github.com/seed31a95821/informer/leaderelection"
)

// Fleet runs the controller as one replica of several, on a Lease
// (package leaderelection): a warm standby. Every replica starts its
// informers and syncs its caches; only the workers wait, at a
// leaderelection.Gate, for this replica's term. On takeover they reconcile
// at once from the warm cache and the keys already queued: no list, no
// relist. docs/fleet.md explains the guarantees.
type Fleet struct {
	// Identity names this replica in the Lease; it must be unique.
	Identity string
	// LeaseNamespace and LeaseName name the Lease; "" means "default" and
	// "summarize-controller".
	LeaseNamespace, LeaseName string
	// Timing is the election's: zero durations mean client-go's defaults
	// (15 s, 10 s, 2 s). Its Identity is ignored.
	Timing leaderelection.Config
	// OnNewLeader, when set, is told of each new leader seen.
	OnNewLeader func(identity string)
}

// ErrNotLeader is returned by a reconcile that was about to write after
// its term ended (on the clock, even before the term's context was
// cancelled: a process resumed after a pause finds out here).
var ErrNotLeader = errors.New("controller: not the leader")

func (f *Fleet) lock(c *client.Client) (*leaderelection.LeaseLock, error) {
	ns, name := f.LeaseNamespace, f.LeaseName
	if ns == "" {
		ns = "default"
	}
	if name == "" {
		name = "summarize-controller"
	}
	return leaderelection.NewLeaseLock(c, ns, name)
}

// runFleet is Run with leader election: the caches are synced; the
// elector and the workers run until ctx ends. On the way out the elector
// ends the term, waits for the reconciles in it and releases the lease
// (ReleaseOnCancel), so a successor takes over within a retry period.
func (c *Controller) runFleet(ctx context.Context) error {
	f := c.opts.Fleet
	timing := f.Timing
	timing.Identity = f.Identity
	var gate leaderelection.Gate
	elector, err := leaderelection.New(leaderelection.Options{
		Config: timing, Lock: c.lease, ReleaseOnCancel: true,
		Callbacks: leaderelection.Callbacks{
			OnStartedLeading: func(ctx context.Context) {
				c.opts.Logf("controller: %s leads", f.Identity)
				gate.Lead(ctx)
			},
			OnStoppedLeading: func() { c.opts.Logf("controller: %s stopped leading", f.Identity) },
			OnNewLeader:      f.OnNewLeader,
		},
		Logf: c.opts.Logf,
	})
	if err != nil {
		c.queue.ShutDown()
		return fmt.Errorf("controller: %w", err)
	}
	c.mayWrite = func() error {
		if !elector.IsLeader() {
			return ErrNotLeader
		}
		return nil
	}
	var wg sync.WaitGroup
	wg.Go(func() { elector.Run(ctx) })
	for range c.opts.Workers {
		wg.Go(func() {
			for c.processNext(ctx, &gate) {
			}
		})
	}
	<-ctx.Done()
	c.queue.ShutDownWithDrain()
	wg.Wait()
	return nil
}
