package controller_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/seed31a95821/informer/client"
	"github.com/seed31a95821/informer/examples/controller"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/rest"
)

// TestControllerAgainstFakeAPI drives the controller the way a user with
// kubectl would, every write over HTTP, and with the faults of a real
// cluster: failed writes, conflicts, watches cut.
func TestControllerAgainstFakeAPI(t *testing.T) {
	defer goleak.VerifyNone(t)
	srv, cfg, k := shop(t)
	defer srv.Close() // before the leak check

	k.Apply(Deployment("web", "web"), Pod("web-1", "web"), Pod("web-2", "web"), Pod("db-1", "db"), Service("web", "web"))
	stop := Start(t, cfg, "")
	defer stop()
	k.WaitForSummary("web", "pods=2 services=web")

	// Three failed writes (500) and two conflicts: retried through the
	// rate limiter and RetryOnConflict.
	srv.Faults().FailNext(fakeapi.Failure{Verb: "update", Resource: "deployments", Count: 3, Code: 500})
	srv.Faults().FailNext(fakeapi.Failure{Verb: "update", Resource: "deployments", Count: 2, Code: 409})
	k.Apply(Pod("web-3", "web"))
	k.WaitForSummary("web", "pods=3 services=web")

	// The watches are cut while a pod goes away: the informers resume and
	// the controller still hears of it.
	srv.DropWatches()
	k.Delete(Pod("web-1", "web"))
	k.WaitForSummary("web", "pods=2 services=web")

	// A pod relabelled out of the selector, and the service removed.
	k.Relabel(Pod("web-2", "web"), "other")
	k.WaitForSummary("web", "pods=1 services=web")
	k.DeleteService("web")
	k.WaitForSummary("web", "pods=1 services=")
	k.Apply(Service("web-internal", "web"), Service("db", "db"))
	k.WaitForSummary("web", "pods=1 services=web-internal")
}

// shop starts a fake API server and a Kubectl for its namespace "shop".
// The caller closes the server, with a defer that runs before its
// goroutine-leak check (a t.Cleanup would run after it).
func shop(t *testing.T) (*fakeapi.Server, rest.Config, *Kubectl) {
	t.Helper()
	srv, err := fakeapi.NewServer(fakeapi.Options{})
	require.NoError(t, err)
	cfg := rest.Config{Host: srv.URL()}
	return srv, cfg, NewKubectl(t, cfg, "shop")
}

// Start runs a controller until the returned function is called, which
// waits for Run to return.
func Start(t *testing.T, cfg rest.Config, namespace string) (stop func()) {
	t.Helper()
	c, err := controller.New(cfg, controller.Options{Namespace: namespace, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	return func() {
		cancel()
		require.NoError(t, <-done)
	}
}

// Kubectl makes the writes a user would, over HTTP, in one namespace.
type Kubectl struct {
	t           *testing.T
	ns          string
	deployments *client.Resource[*appsv1.Deployment]
	pods        *client.Resource[*corev1.Pod]
	services    *client.Resource[*corev1.Service]
}

// NewKubectl returns a Kubectl for the server cfg names.
func NewKubectl(t *testing.T, cfg rest.Config, ns string) *Kubectl {
	c, err := client.New(cfg, client.Options{})
	require.NoError(t, err)
	k := &Kubectl{t: t, ns: ns}
	k.deployments, err = client.For[*appsv1.Deployment](c)
	require.NoError(t, err)
	k.pods, err = client.For[*corev1.Pod](c)
	require.NoError(t, err)
	k.services, err = client.For[*corev1.Service](c)
	require.NoError(t, err)
	// As on a real cluster, the namespace must exist before anything is
	// written into it: `kubectl create namespace`.
	namespaces, err := client.For[*corev1.Namespace](c)
	require.NoError(t, err)
	_, err = namespaces.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	return k
}

// Apply creates each object in the namespace.
func (k *Kubectl) Apply(objs ...metav1.Object) {
	ctx := context.Background()
	for _, o := range objs {
		o.SetNamespace(k.ns)
		var err error
		switch o := o.(type) {
		case *appsv1.Deployment:
			_, err = k.deployments.Create(ctx, o, metav1.CreateOptions{})
		case *corev1.Pod:
			_, err = k.pods.Create(ctx, o, metav1.CreateOptions{})
		case *corev1.Service:
			_, err = k.services.Create(ctx, o, metav1.CreateOptions{})
		}
		require.NoError(k.t, err, "create %s", o.GetName())
	}
}

// Delete deletes a pod.
func (k *Kubectl) Delete(p *corev1.Pod) {
	zero := int64(0)
	require.NoError(k.t, k.pods.Delete(context.Background(), k.ns, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}))
}

// DeleteService deletes a service.
func (k *Kubectl) DeleteService(name string) {
	require.NoError(k.t, k.services.Delete(context.Background(), k.ns, name, metav1.DeleteOptions{}))
}

// Relabel sets a pod's app label, as kubectl label --overwrite does.
func (k *Kubectl) Relabel(p *corev1.Pod, app string) {
	patch := []byte(`{"metadata":{"labels":{"app":"` + app + `"}}}`)
	_, err := k.pods.Patch(context.Background(), k.ns, p.Name, "application/merge-patch+json", patch, metav1.PatchOptions{}, "")
	require.NoError(k.t, err)
}

// WaitForSummary waits until the Deployment on the server carries want.
func (k *Kubectl) WaitForSummary(name, want string) {
	k.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var got string
	for time.Now().Before(deadline) {
		d, err := k.deployments.Get(context.Background(), k.ns, name, metav1.GetOptions{})
		require.NoError(k.t, err)
		if got = d.Annotations[controller.SummaryAnnotation]; got == want {
			return
		}
		time.Sleep(20 * time.Millisecond) // polling the server for a condition, with a deadline
	}
	k.t.Fatalf("deployment %s: summary %q, want %q", name, got, want)
}

// Deployment returns a Deployment whose pods are labelled app=app.
func Deployment(name, app string) *appsv1.Deployment {
	ls := map[string]string{"app": app}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: ls},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: ls},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.example/" + app + ":1"}}},
			},
		},
	}
}

// Pod returns a pod labelled app=app.
func Pod(name, app string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": app}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.example/" + app + ":1"}}},
	}
}

// Service returns a Service selecting app=app.
func Service(name, app string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": app},
			Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
}
