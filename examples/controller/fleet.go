package controller

import (
	"context"
	"errors"
	"fmt"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/client"
	"github.com/seed31a95821/informer/leaderelection"
	"github.com/seed31a95821/informer/sharding"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	// Shards, when above 0, splits the keys over that many shard Leases
	// (package sharding) instead of electing one leader: every replica
	// works, each on the keys of the shards it holds.
	Shards int
	// OnHeld, with Shards, is told when this replica starts and stops
	// holding a shard.
	OnHeld func(shard int, held bool)
}

// ErrNotLeader is returned by a reconcile that was about to write after
// its term (the leader's, or its key's shard's) ended (on the clock, even before the term's context was
// cancelled: a process resumed after a pause finds out here).
var ErrNotLeader = errors.New("controller: not the leader")

func (f *Fleet) names() (namespace, name string) {
	namespace, name = f.LeaseNamespace, f.LeaseName
	if namespace == "" {
		namespace = "default"
	}
	if name == "" {
		name = "summarize-controller"
	}
	return namespace, name
}

func (f *Fleet) lock(c *client.Client) (*leaderelection.LeaseLock, error) {
	ns, name := f.names()
	return leaderelection.NewLeaseLock(c, ns, name)
}

// runShards is Run with sharding: every replica's workers work, each key
// only while this replica holds its shard; a key of another shard is
// parked and comes back when the shard does.
func (c *Controller) runShards(ctx context.Context) error {
	f := c.opts.Fleet
	ns, name := f.names()
	group, err := sharding.NewClientGroup(c.client, ns, name)
	if err != nil {
		c.queue.ShutDown()
		return fmt.Errorf("controller: %w", err)
	}
	coord, err := sharding.New(sharding.Options{Identity: f.Identity, Shards: f.Shards, Timing: f.Timing,
		Group: group, Name: name, Queue: c.queue, OnHeld: f.OnHeld, Logger: c.opts.Logger, Metrics: c.opts.Metrics,
		Exists: c.deploymentExists})
	if err != nil {
		c.queue.ShutDown()
		return fmt.Errorf("controller: %w", err)
	}
	c.mayWrite = func(key string) error {
		if !coord.Holds(key) {
			return ErrNotLeader
		}
		return nil
	}
	admit := func(_ context.Context, key string) (context.Context, func(), bool) { return coord.Enter(key) }
	return c.runWorkers(ctx, admit, coord.Run)
}

// deploymentExists tells the Coordinator whether a parked key's
// Deployment is still in the cache (sharding.Options.Exists).
func (c *Controller) deploymentExists(key string) bool {
	namespace, name, err := informer.SplitKey(key)
	if err != nil {
		return false
	}
	_, err = c.deployments.Namespace(namespace).Get(name)
	return !apierrors.IsNotFound(err)
}

// runFleet is Run with leader election: the caches are synced; the
// elector and the workers run until ctx ends. On the way out the elector
// ends the term, waits for the reconciles in it and releases the lease
// (ReleaseOnCancel), so a successor takes over within a retry period.
func (c *Controller) runFleet(ctx context.Context) error {
	f := c.opts.Fleet
	if f.Shards > 0 {
		return c.runShards(ctx)
	}
	timing := f.Timing
	timing.Identity = f.Identity
	var gate leaderelection.Gate
	elector, err := leaderelection.New(leaderelection.Options{
		Config: timing, Lock: c.lease, ReleaseOnCancel: true,
		Callbacks: leaderelection.Callbacks{
			OnStartedLeading: func(ctx context.Context) {
				c.opts.Logger.Info("controller: "+f.Identity+" leads", "identity", f.Identity)
				gate.Lead(ctx)
			},
			OnStoppedLeading: func() {
				c.opts.Logger.Info("controller: "+f.Identity+" stopped leading", "identity", f.Identity)
			},
			OnNewLeader: f.OnNewLeader,
		},
		Logger:  c.opts.Logger,
		Metrics: c.opts.Metrics,
	})
	if err != nil {
		c.queue.ShutDown()
		return fmt.Errorf("controller: %w", err)
	}
	c.mayWrite = func(string) error {
		if !elector.IsLeader() {
			return ErrNotLeader
		}
		return nil
	}
	admit := func(ctx context.Context, _ string) (context.Context, func(), bool) {
		term, leave, err := gate.Enter(ctx)
		return term, leave, err == nil
	}
	return c.runWorkers(ctx, admit, elector.Run)
}
