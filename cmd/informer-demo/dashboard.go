package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/reflector/wire"
)

// dashboard owns the factory, the informers and the handlers whose progress it
// prints.
type dashboard struct {
	out      io.Writer
	factory  *informer.Factory
	pods     *informer.SharedInformer[*corev1.Pod]
	services *informer.SharedInformer[*corev1.Service]
	regs     []*informer.Registration
	events   atomic.Int64  // changes the "count" handlers have seen, of both types, after the initial list
	slow     time.Duration // how long the slow handler works per event
}

func newDashboard(cfg wire.Config, slow time.Duration, out io.Writer) (*dashboard, error) {
	opts := informer.FactoryOptions{}
	opts.Informer.Transform = informer.StripManagedFields // a fifth of a pod's bytes nobody reads
	d := &dashboard{out: out, slow: slow, factory: informer.NewFactory(cfg, opts)}
	var err error
	if d.pods, err = informer.For[*corev1.Pod](d.factory); err != nil {
		return nil, err
	}
	if d.services, err = informer.For[*corev1.Service](d.factory); err != nil {
		return nil, err
	}
	return d, d.addHandlers()
}

// addHandlers registers three handlers: two fast counters and one that is
// slow on purpose (a stand-in for a handler that calls out to something), to
// show that its lag is its own and delays nobody else.
func (d *dashboard) addHandlers() error {
	// Changes only: the initial list is state, not events, and counting it
	// made the first summary line show several times the churn rate.
	count := func() { d.events.Add(1) }
	countNew := func(inInitialList bool) {
		if !inInitialList {
			count()
		}
	}
	podCount, err := d.pods.AddEventHandler(informer.Handler[*corev1.Pod]{
		OnAdd:    func(_ *corev1.Pod, initial bool) { countNew(initial) },
		OnUpdate: func(_, _ *corev1.Pod) { count() },
		OnDelete: func(*corev1.Pod, bool) { count() },
	}, informer.HandlerOptions{Name: "pod-count"})
	if err != nil {
		return err
	}
	svcCount, err := d.services.AddEventHandler(informer.Handler[*corev1.Service]{
		OnAdd:    func(_ *corev1.Service, initial bool) { countNew(initial) },
		OnUpdate: func(_, _ *corev1.Service) { count() },
		OnDelete: func(*corev1.Service, bool) { count() },
	}, informer.HandlerOptions{Name: "svc-count"})
	if err != nil {
		return err
	}
	slow, err := d.pods.AddEventHandler(informer.Handler[*corev1.Pod]{
		OnAdd:    func(*corev1.Pod, bool) { time.Sleep(d.slow) },
		OnUpdate: func(_, _ *corev1.Pod) { time.Sleep(d.slow) },
	}, informer.HandlerOptions{Name: "slow-pods"})
	if err != nil {
		return err
	}
	d.regs = []*informer.Registration{podCount, svcCount, slow}
	return nil
}

// waitForSync shows the caches filling until both informers have synced.
func (d *dashboard) waitForSync(ctx context.Context) bool {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	start := time.Now()
	// A synced channel stays closed: once it has fired, stop selecting it,
	// or the loop would spin until the other informer syncs.
	podsSynced, servicesSynced := d.pods.Synced(), d.services.Synced()
	for !d.pods.HasSynced() || !d.services.HasSynced() {
		select {
		case <-ctx.Done():
			return false
		case <-podsSynced:
			podsSynced = nil
		case <-servicesSynced:
			servicesSynced = nil
		case <-tick.C:
			fmt.Fprintf(d.out, "syncing: pods %d, services %d cached\n", d.pods.Indexer().Len(), d.services.Indexer().Len())
		}
	}
	fmt.Fprintf(d.out, "synced in %v: pods %d, services %d\n", time.Since(start).Round(time.Millisecond),
		d.pods.Indexer().Len(), d.services.Indexer().Len())
	return true
}

// report prints one summary line a second until ctx is done.
func (d *dashboard) report(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last, lastAt := d.events.Load(), time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			n := d.events.Load()
			rate := float64(n-last) / now.Sub(lastAt).Seconds()
			last, lastAt = n, now
			fmt.Fprintln(d.out, d.summary(rate))
		}
	}
}

// summary is the one-line status: throughput, cache sizes, per-handler lag,
// and how often the watches had to be reopened.
func (d *dashboard) summary(rate float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "events/s %6.0f | cache pods %d services %d |", rate, d.pods.Indexer().Len(), d.services.Indexer().Len())
	for _, r := range d.regs {
		s := r.Stats()
		fmt.Fprintf(&b, " %s lag %d (max %d, %v/event) |", s.Name, s.Pending, s.MaxPending, threeDigits(s.LastHandleDuration))
	}
	ps, ss := d.pods.Stats(), d.services.Stats()
	fmt.Fprintf(&b, " watch restarts %d, relists %d", max(0, ps.Watches-1)+max(0, ss.Watches-1), ps.Relists+ss.Relists)
	return b.String()
}

// threeDigits rounds d to three significant digits: a fast handler's 312ns
// and a slow one's 2.33ms both read at a glance.
func threeDigits(d time.Duration) time.Duration {
	unit := time.Duration(1)
	for d >= 1000*unit {
		unit *= 10
	}
	return d.Round(unit)
}
