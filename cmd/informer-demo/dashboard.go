package main

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/rest"
)

// dashboard owns the factory, the informers and the handlers whose progress it
// reports.
type dashboard struct {
	out        io.Writer
	factory    *informer.Factory
	pods       *informer.SharedInformer[*corev1.Pod]
	services   *informer.SharedInformer[*corev1.Service]
	lanes      []lane       // one per handler, in the order they are shown
	events     atomic.Int64 // changes the "count" handlers have seen, of both types, after the initial list
	tombstones atomic.Int64 // deletes the informers learned of from a relist (finalStateUnknown)
	slow       time.Duration
}

// lane is one handler as the dashboard shows it: its registration's
// statistics and the demo's own meter of its calls.
type lane struct {
	informer string // which informer's handler it is: "pods" or "services"
	reg      *informer.Registration
	meter    *meter
}

func newDashboard(cfg rest.Config, slow time.Duration, out io.Writer) (*dashboard, error) {
	return newDashboardWith(cfg, informer.FactoryOptions{}, slow, out)
}

// newDashboardWith is newDashboard with the factory's options given, so the
// embedded server's demo can tune the reflector (see cluster.factoryOptions).
func newDashboardWith(cfg rest.Config, opts informer.FactoryOptions, slow time.Duration, out io.Writer) (*dashboard, error) {
	opts.Informer.Transform = informer.StripManagedFields() // a fifth of a pod's bytes nobody reads
	opts.Informer.OnError = func(error) {}                  // counted in Stats, shown on the timeline
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
	podMeter, svcMeter, slowMeter := &meter{}, &meter{}, &meter{}
	// Changes only: the initial list is state, not events, and counting it
	// made the first summary line show several times the churn rate.
	count := func() { d.events.Add(1) }
	countNew := func(inInitialList bool) {
		if !inInitialList {
			count()
		}
	}
	deleted := func(finalStateUnknown bool) {
		count()
		if finalStateUnknown {
			d.tombstones.Add(1)
		}
	}
	podCount, err := d.pods.AddEventHandler(informer.Handler[*corev1.Pod]{
		OnAdd:    func(_ *corev1.Pod, initial bool) { podMeter.time(func() { countNew(initial) }) },
		OnUpdate: func(_, _ *corev1.Pod) { podMeter.time(count) },
		OnDelete: func(_ *corev1.Pod, unknown bool) { podMeter.time(func() { deleted(unknown) }) },
	}, informer.HandlerOptions{Name: "pod-count"})
	if err != nil {
		return err
	}
	svcCount, err := d.services.AddEventHandler(informer.Handler[*corev1.Service]{
		OnAdd:    func(_ *corev1.Service, initial bool) { svcMeter.time(func() { countNew(initial) }) },
		OnUpdate: func(_, _ *corev1.Service) { svcMeter.time(count) },
		OnDelete: func(_ *corev1.Service, unknown bool) { svcMeter.time(func() { deleted(unknown) }) },
	}, informer.HandlerOptions{Name: "svc-count"})
	if err != nil {
		return err
	}
	work := func() { time.Sleep(d.slow) }
	slow, err := d.pods.AddEventHandler(informer.Handler[*corev1.Pod]{
		OnAdd:    func(*corev1.Pod, bool) { slowMeter.time(work) },
		OnUpdate: func(_, _ *corev1.Pod) { slowMeter.time(work) },
	}, informer.HandlerOptions{Name: "slow-pods"})
	if err != nil {
		return err
	}
	d.lanes = []lane{{"pods", podCount, podMeter}, {"services", svcCount, svcMeter}, {"pods", slow, slowMeter}}
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

// synced reports whether both caches have synced: the demo's readiness.
func (d *dashboard) synced() bool { return d.pods.HasSynced() && d.services.HasSynced() }
