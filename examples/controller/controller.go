package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/client"
	"github.com/seed31a95821/informer/leaderelection"
	"github.com/seed31a95821/informer/lister"
	"github.com/seed31a95821/informer/metrics"
	"github.com/seed31a95821/informer/rest"
	"github.com/seed31a95821/informer/workqueue"
)

// SummaryAnnotation is the annotation the controller keeps on Deployments.
const SummaryAnnotation = "example.informer.dev/summary"

// maxRetries is how many times a failing key is retried before the
// controller gives up on it until its next event. Retries back off
// (5ms, 10ms, ... with the default limiter), so 15 spans minutes.
const maxRetries = 15

// Options configure a Controller. The zero value watches every namespace
// with two workers.
type Options struct {
	// Namespace limits the controller to one namespace; "" is all.
	Namespace string
	// Workers is how many keys are handled at once; 0 means 2.
	Workers int
	// Logger receives one line per write and per error, and the
	// informers' own; nil means slog.Default().
	Logger *slog.Logger
	// Metrics, when set, receives the work queue's figures (its name is
	// "summarize"), the informers' and the requests'.
	Metrics *metrics.Registry
	// Fleet, when set, runs the controller as one replica of several:
	// every replica keeps its caches warm, and only the leader's workers
	// reconcile (fleet.go).
	Fleet *Fleet
	// Trace, when set, is told of every reconcile: its key and when it
	// started and ended. The fleet tests use it to prove that no key was
	// reconciled by two replicas at once.
	Trace func(key string, start, end time.Time)
}

// Controller keeps SummaryAnnotation current on every Deployment.
type Controller struct {
	opts        Options
	factory     *informer.Factory
	deployments *lister.Lister[*appsv1.Deployment]
	pods        *lister.Lister[*corev1.Pod]
	services    *lister.Lister[*corev1.Service]
	writer      *client.Resource[*appsv1.Deployment]
	queue       *workqueue.Queue[string]
	regs        []informer.Syncer         // the handlers' registrations
	client      *client.Client            // the writer's, shared by the leases
	lease       *leaderelection.LeaseLock // nil without Fleet
	// mayWrite is asked right before each write of key; nil always allows. With
	// a Fleet it asks the elector, on the clock, whether the term still
	// holds (fleet.go).
	mayWrite func(key string) error
}

// New wires the controller to the API server cfg describes. Nothing runs
// until Run.
func New(cfg rest.Config, opts Options) (*Controller, error) {
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = opts.Metrics // every request, the informers' and the writer's
	}
	c := &Controller{opts: opts, queue: workqueue.New(workqueue.Options[string]{Name: "summarize", Metrics: opts.Metrics})}
	c.factory = informer.NewFactory(cfg, informer.FactoryOptions{
		Namespace: opts.Namespace,
		// The informers log what they recover from (a cut watch, a
		// relist) to the same logger: worth a line, not a stop.
		Informer: informer.Options{Logger: opts.Logger, Metrics: opts.Metrics},
	})
	writer, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, err
	}
	if c.writer, err = client.For[*appsv1.Deployment](writer); err != nil {
		return nil, err
	}
	c.client = writer
	if opts.Fleet != nil {
		if c.lease, err = opts.Fleet.lock(writer); err != nil {
			return nil, err
		}
	}
	if err := c.watch(); err != nil {
		return nil, err
	}
	return c, nil
}

// watch makes the three informers and registers the handlers: all three
// share the factory, and so one watch per resource.
func (c *Controller) watch() error {
	deployments, err := informer.For[*appsv1.Deployment](c.factory)
	if err != nil {
		return err
	}
	pods, err := informer.For[*corev1.Pod](c.factory)
	if err != nil {
		return err
	}
	services, err := informer.For[*corev1.Service](c.factory)
	if err != nil {
		return err
	}
	c.deployments, c.pods, c.services = deployments.Lister(), pods.Lister(), services.Lister()

	reg, err := deployments.AddEventHandler(informer.EnqueueKeys[*appsv1.Deployment](c.queue), informer.HandlerOptions{Name: "deployments"})
	if err != nil {
		return err
	}
	c.regs = append(c.regs, reg)
	// A pod's status changes often and never changes the count: only adds,
	// deletes and label changes matter.
	reg, err = pods.AddEventHandler(mapToDeployments[*corev1.Pod](c, func(p *corev1.Pod, d *appsv1.Deployment) bool {
		return selects(d.Spec.Selector, p.Labels)
	}), informer.HandlerOptions{Name: "pods", UpdateFilter: informer.LabelsChanged})
	if err != nil {
		return err
	}
	c.regs = append(c.regs, reg)
	reg, err = services.AddEventHandler(mapToDeployments[*corev1.Service](c, func(s *corev1.Service, d *appsv1.Deployment) bool {
		return serviceSelects(s, d)
	}), informer.HandlerOptions{Name: "services"})
	if err != nil {
		return err
	}
	c.regs = append(c.regs, reg)
	return nil
}

// mapToDeployments is the handler for a related kind: it enqueues the key of
// every Deployment of the object's namespace that concerns says the object
// matters to. For an update, both the old and the new state count: a pod
// whose labels changed leaves one Deployment and joins another.
func mapToDeployments[T interface {
	*corev1.Pod | *corev1.Service
	metav1.Object
	runtime.Object
}](c *Controller, concerns func(T, *appsv1.Deployment) bool) informer.Handler[T] {
	enqueue := func(obj T) {
		ds, err := c.deployments.Namespace(obj.GetNamespace()).List(labels.Everything())
		if err != nil {
			return
		}
		for _, d := range ds {
			if concerns(obj, d) {
				if key, err := informer.KeyOf(d); err == nil {
					c.queue.Add(key)
				}
			}
		}
	}
	return informer.Handler[T]{
		OnAdd:    func(obj T, _ bool) { enqueue(obj) },
		OnUpdate: func(old, cur T) { enqueue(old); enqueue(cur) },
		OnDelete: func(obj T, _ bool) { enqueue(obj) },
	}
}

// Run starts the informers and the workers and blocks until ctx ends; then
// it lets the workers finish the keys in hand and stops everything.
func (c *Controller) Run(ctx context.Context) error {
	c.factory.Start(ctx)
	defer c.factory.Shutdown()
	if !informer.WaitForCacheSync(ctx, c.regs...) {
		c.queue.ShutDown()
		return fmt.Errorf("controller: caches did not sync: %w", context.Cause(ctx))
	}
	if c.opts.Fleet != nil {
		return c.runFleet(ctx)
	}
	return c.runWorkers(ctx, nil, nil)
}

// runWorkers runs the workers, each key admitted by admit (nil: every
// key), and beside them run (a fleet's elector or shard coordinator; nil:
// none), until ctx ends; then it lets the workers finish the keys in hand
// (ShutDownWithDrain) and returns once they and run have stopped.
func (c *Controller) runWorkers(ctx context.Context, admit admit, run func(context.Context)) error {
	var wg sync.WaitGroup
	if run != nil {
		wg.Go(func() { run(ctx) })
	}
	for range c.opts.Workers {
		wg.Go(func() {
			for c.processNext(ctx, admit) {
			}
		})
	}
	<-ctx.Done()
	c.queue.ShutDownWithDrain()
	wg.Wait()
	return nil
}

// Ready reports whether the informers' caches have synced: until then the
// controller would act on a partial picture, so a /readyz says no.
func (c *Controller) Ready() bool {
	for _, r := range c.regs {
		select {
		case <-r.Synced():
		default:
			return false
		}
	}
	return true
}

// log is the controller's logger with the keys of one Deployment.
func (c *Controller) log(key string) *slog.Logger {
	ns, name, _ := informer.SplitKey(key)
	return c.opts.Logger.With("resource", "deployments.apps", "namespace", ns, "name", name)
}

// admit decides whether and under which context a worker reconciles a
// key (fleet.go): nil admits every key under the worker's context.
type admit func(ctx context.Context, key string) (work context.Context, leave func(), ok bool)

// processNext handles one key: the worker loop's body. In a fleet, admit
// holds the key until this replica may work on it (a leader's term, the
// key's shard) and gives the context of that term; a key not admitted is
// parked by admit and dropped here; a key whose term ended under it goes
// back to the queue for the next term.
func (c *Controller) processNext(ctx context.Context, admit admit) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	work, leave := ctx, func() {}
	if admit != nil {
		var ok bool
		if work, leave, ok = admit(ctx, key); !ok {
			return true
		}
	}
	start := time.Now()
	err := c.reconcile(work, key)
	if c.opts.Trace != nil {
		c.opts.Trace(key, start, time.Now())
	}
	leave()
	switch {
	case err == nil:
		c.queue.Forget(key)
	case ctx.Err() != nil:
		// Stopping: the key is dropped with the queue.
	case work.Err() != nil || errors.Is(err, ErrNotLeader):
		c.queue.Add(key) // the term ended: the next term does it
	case c.queue.NumRequeues(key) < maxRetries:
		c.log(key).Warn("reconcile failed, retrying", "error", err)
		c.queue.AddRateLimited(key)
	default:
		c.log(key).Error("reconcile failed, giving up until the next event", "error", err)
		c.queue.Forget(key)
	}
	return true
}

// reconcile brings one Deployment's annotation up to date.
func (c *Controller) reconcile(ctx context.Context, key string) error {
	namespace, name, err := informer.SplitKey(key)
	if err != nil {
		return nil // no retry can fix a malformed key
	}
	cached, err := c.deployments.Namespace(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil // deleted: the annotation went with it
	}
	if err != nil {
		return err
	}
	want, err := c.summary(cached)
	if err != nil {
		return err
	}
	if cached.Annotations[SummaryAnnotation] == want {
		return nil // our own write coming back, or nothing changed
	}
	first := true
	return client.RetryOnConflict(ctx, client.DefaultRetry, func() error {
		d := cached
		if !first { // the cache was stale: read the server's version
			if d, err = c.writer.Get(ctx, namespace, name, metav1.GetOptions{}); err != nil {
				return err
			}
		}
		first = false
		d = d.DeepCopy() // never write through the cached pointer
		if d.Annotations == nil {
			d.Annotations = map[string]string{}
		}
		d.Annotations[SummaryAnnotation] = want
		if c.mayWrite != nil {
			if err := c.mayWrite(key); err != nil {
				return err
			}
		}
		if _, err := c.writer.Update(ctx, d, metav1.UpdateOptions{FieldManager: "summarize"}); err != nil {
			return err
		}
		c.log(key).Info("annotated", "summary", want, "resourceVersion", d.ResourceVersion)
		return nil
	})
}

// summary computes the annotation from the listers alone.
func (c *Controller) summary(d *appsv1.Deployment) (string, error) {
	pods, err := c.pods.Namespace(d.Namespace).List(labels.Everything())
	if err != nil {
		return "", err
	}
	n := 0
	for _, p := range pods {
		if selects(d.Spec.Selector, p.Labels) {
			n++
		}
	}
	services, err := c.services.Namespace(d.Namespace).List(labels.Everything())
	if err != nil {
		return "", err
	}
	var names []string
	for _, s := range services {
		if serviceSelects(s, d) {
			names = append(names, s.Name)
		}
	}
	sort.Strings(names)
	return fmt.Sprintf("pods=%d services=%s", n, strings.Join(names, ",")), nil
}

// selects reports whether a Deployment's label selector matches a set of
// labels. A selector that does not parse, or is empty, matches nothing:
// the API server refuses both for Deployments.
func selects(sel *metav1.LabelSelector, set map[string]string) bool {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil || s.Empty() {
		return false
	}
	return s.Matches(labels.Set(set))
}

// serviceSelects reports whether a Service sends traffic to d's pods: its
// selector is not empty and matches d's pod template labels.
func serviceSelects(s *corev1.Service, d *appsv1.Deployment) bool {
	if len(s.Spec.Selector) == 0 {
		return false
	}
	return labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels))
}
