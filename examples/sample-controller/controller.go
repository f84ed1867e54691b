package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/client"
	"github.com/seed31a95821/informer/events"
	"github.com/seed31a95821/informer/leaderelection"
	"github.com/seed31a95821/informer/lister"
	"github.com/seed31a95821/informer/metrics"
	"github.com/seed31a95821/informer/reconcile"
	"github.com/seed31a95821/informer/rest"
	"github.com/seed31a95821/informer/workqueue"
)

// agentName names the controller: the source of its events and the field
// manager of its writes.
const agentName = "sample-controller"

// The events the controller records about a Foo.
const (
	reasonSynced  = "Synced"
	messageSynced = "Foo synced successfully"
	reasonExists  = "ErrResourceExists"
	messageExists = "Resource %q already exists and is not managed by Foo"
)

// errNotOurs is returned, so the key is retried with backoff, while the
// Deployment a Foo names belongs to someone else.
var errNotOurs = errors.New("the deployment exists and is not managed by the Foo")

// Controller makes each Foo's Deployment exist with the Foo's replicas and
// copies the Deployment's available replicas into the Foo's status. Make
// it with NewController, run it once with Run.
type Controller struct {
	factory     *informer.Factory
	foos        *lister.Lister[*Foo]
	deployments *lister.Lister[*appsv1.Deployment]
	fooClient   *client.Resource[*Foo]
	deplClient  *client.Resource[*appsv1.Deployment]
	recorder    *events.Recorder
	queue       *workqueue.Queue[string]
	synced      []informer.Syncer // the handlers' registrations
	workers     int
	ready       atomic.Bool       // the caches have synced: /readyz answers 200
	metrics     *metrics.Registry // the queue's, informers' and requests' figures: /metrics
	elector     *leaderelection.Elector
	gate        leaderelection.Gate // with an elector, the workers work only while it leads
}

// NewController wires the controller to the API server cfg describes:
// informers for Foos and Deployments in one factory, a client and an
// event recorder, all reporting to one metrics registry. With a non-empty
// identity it is one replica of several: every replica keeps its caches
// warm, and only the holder of the Lease leaderNamespace/agentName works.
// Nothing runs until Run.
func NewController(cfg rest.Config, workers int, identity, leaderNamespace string) (*Controller, error) {
	scheme, reg := newScheme(), new(metrics.Registry)
	cfg.Metrics = reg // the requests of the informers and of the client
	c := &Controller{
		factory: informer.NewFactory(cfg, informer.FactoryOptions{Scheme: scheme, Informer: informer.Options{Metrics: reg}}),
		queue:   workqueue.New(workqueue.Options[string]{Name: agentName, Metrics: reg}),
		workers: workers, metrics: reg,
	}
	cl, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	if identity != "" {
		c.elector, err = leaderelection.OnLease(cl, leaderNamespace, agentName, leaderelection.Options{ReleaseOnCancel: true, Metrics: reg,
			Config: leaderelection.Config{Identity: identity}, Callbacks: leaderelection.Callbacks{OnStartedLeading: c.gate.Lead}})
		if err != nil {
			return nil, err
		}
	}
	if c.fooClient, err = client.For[*Foo](cl); err != nil {
		return nil, err
	}
	if c.deplClient, err = client.For[*appsv1.Deployment](cl); err != nil {
		return nil, err
	}
	if c.recorder, err = events.NewRecorder(cfg, events.Options{Component: agentName, Scheme: scheme}); err != nil {
		return nil, err
	}
	return c, c.watch()
}

// watch makes the informers and their handlers: a Foo's event enqueues
// the Foo, a Deployment's enqueues the Foo that controls it.
func (c *Controller) watch() error {
	foos, err := informer.For[*Foo](c.factory)
	if err != nil {
		return err
	}
	deployments, err := informer.For[*appsv1.Deployment](c.factory)
	if err != nil {
		return err
	}
	c.foos, c.deployments = foos.Lister(), deployments.Lister()
	fooReg, err := foos.AddEventHandler(informer.EnqueueKeys[*Foo](c.queue), informer.HandlerOptions{Name: "foos"})
	if err != nil {
		return err
	}
	deplReg, err := deployments.AddEventHandler(informer.EnqueueOwner[*appsv1.Deployment](c.queue, apiresource.Guess(fooKind)),
		informer.HandlerOptions{Name: "deployments"})
	if err != nil {
		return err
	}
	c.synced = []informer.Syncer{fooReg, deplReg}
	return nil
}

// Run starts the informers, the recorder and the workers, and blocks until
// ctx ends; then it lets the workers finish the keys in hand and stops
// everything it started.
func (c *Controller) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { c.recorder.Run(ctx) })
	c.factory.Start(ctx)
	defer c.factory.Shutdown()
	if !informer.WaitForCacheSync(ctx, c.synced...) {
		c.queue.ShutDown()
		return fmt.Errorf("%s: caches did not sync: %w", agentName, context.Cause(ctx))
	}
	c.ready.Store(true)
	loop := &reconcile.Loop{Queue: c.queue, Reconcile: c.sync, Workers: c.workers,
		OnError: func(key string, err error) { slog.Error("sync failed; retrying", "foo", key, "err", err) }}
	if c.elector != nil {
		loop.Gate = &c.gate
		wg.Go(func() { c.elector.Run(ctx) })
	}
	return loop.Run(ctx)
}

// Ready reports whether the caches have synced.
func (c *Controller) Ready() bool { return c.ready.Load() }

// sync brings the Foo named by key and its Deployment together.
func (c *Controller) sync(ctx context.Context, key string) (reconcile.Result, error) {
	namespace, name, err := informer.SplitKey(key)
	if err != nil {
		return reconcile.Result{}, nil // no retry mends a malformed key
	}
	foo, err := c.foos.Namespace(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil // deleted: the collector takes the Deployment
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	if foo.Spec.DeploymentName == "" {
		slog.Error("spec.deploymentName is empty", "foo", key)
		return reconcile.Result{}, nil // the Foo's next update will wake us
	}
	d, err := c.deployments.Namespace(namespace).Get(foo.Spec.DeploymentName)
	switch {
	case apierrors.IsNotFound(err):
		d, err = c.applyDeployment(ctx, foo)
	case err == nil && !metav1.IsControlledBy(d, foo):
		c.recorder.Eventf(foo, corev1.EventTypeWarning, reasonExists, messageExists, d.Name)
		return reconcile.Result{}, fmt.Errorf("%s: %q: %w", key, d.Name, errNotOurs)
	case err == nil && foo.Spec.Replicas != nil && (d.Spec.Replicas == nil || *d.Spec.Replicas != *foo.Spec.Replicas):
		d, err = c.applyDeployment(ctx, foo)
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	if err := c.updateStatus(ctx, foo, d); err != nil {
		return reconcile.Result{}, err
	}
	c.recorder.Eventf(foo, corev1.EventTypeNormal, reasonSynced, messageSynced)
	return reconcile.Result{}, nil
}

// applyDeployment creates or corrects the Foo's Deployment with a
// server-side apply of the fields the controller owns.
func (c *Controller) applyDeployment(ctx context.Context, foo *Foo) (*appsv1.Deployment, error) {
	return c.deplClient.Apply(ctx, newDeployment(foo), client.ApplyOptions{FieldManager: agentName, Force: true})
}

// updateStatus copies the Deployment's available replicas into the Foo's
// status, when they differ, by a server-side apply of that one field.
func (c *Controller) updateStatus(ctx context.Context, foo *Foo, d *appsv1.Deployment) error {
	if foo.Status.AvailableReplicas == d.Status.AvailableReplicas {
		return nil
	}
	status := &Foo{
		TypeMeta:   metav1.TypeMeta{APIVersion: fooVersion.String(), Kind: fooKind.Kind},
		ObjectMeta: metav1.ObjectMeta{Namespace: foo.Namespace, Name: foo.Name},
		Status:     FooStatus{AvailableReplicas: d.Status.AvailableReplicas},
	}
	_, err := c.fooClient.ApplyStatus(ctx, status, client.ApplyOptions{FieldManager: agentName, Force: true})
	return err
}

// newDeployment is the Deployment a Foo asks for: nginx pods labelled
// with the Foo's name, controlled by the Foo (so that it is collected with
// it, and its events wake the Foo).
func newDeployment(foo *Foo) *appsv1.Deployment {
	labels := map[string]string{"app": "nginx", "controller": foo.Name}
	return &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            foo.Spec.DeploymentName,
			Namespace:       foo.Namespace,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(foo, fooKind)},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: foo.Spec.Replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:latest"}}},
			},
		},
	}
}
