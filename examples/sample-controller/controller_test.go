package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/seed31a95821/informer/client"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/rest"
)

// TestControllerInProcess runs the controller against an in-process
// fakeapi serving the Foo CRD, under the race detector: a Foo gets its
// Deployment, a Foo naming someone else's Deployment gets the warning, and
// the Deployment goes with its Foo.
func TestControllerInProcess(t *testing.T) {
	srv := fooServer(t)
	taken := newDeployment(&Foo{ObjectMeta: metav1.ObjectMeta{Namespace: "default"}, Spec: FooSpec{DeploymentName: "taken"}})
	taken.OwnerReferences = nil // someone else's
	_, err := srv.Create(taken)
	require.NoError(t, err)

	cfg := rest.Config{Host: srv.URL()}
	c, err := NewController(cfg, 2, "", "")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()

	cl, err := client.New(cfg, client.Options{Scheme: newScheme()})
	require.NoError(t, err)
	defer cl.CloseIdleConnections()
	foos, err := client.For[*Foo](cl)
	require.NoError(t, err)
	deployments, err := client.For[*appsv1.Deployment](cl)
	require.NoError(t, err)
	two := int32(2)
	foo, err := foos.Create(ctx, &Foo{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: FooSpec{DeploymentName: "web", Replicas: &two}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = foos.Create(ctx, &Foo{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "clash"},
		Spec: FooSpec{DeploymentName: "taken"}}, metav1.CreateOptions{})
	require.NoError(t, err)

	var d *appsv1.Deployment
	require.Eventually(t, func() bool {
		d, err = deployments.Get(ctx, "default", "web", metav1.GetOptions{})
		return err == nil
	}, 20*time.Second, 10*time.Millisecond)
	require.True(t, metav1.IsControlledBy(d, foo), "owned by the Foo: %+v", d.OwnerReferences)
	require.Equal(t, two, *d.Spec.Replicas)
	require.Eventually(t, func() bool { return hasEvent(t, srv, "clash", "ErrResourceExists") }, 20*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { return hasEvent(t, srv, "web", "Synced") }, 20*time.Second, 10*time.Millisecond)
	scrape := httptest.NewRecorder()
	c.metrics.Handler().ServeHTTP(scrape, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Regexp(t, `(?m)^workqueue_adds_total\{name="sample-controller"\} [1-9]`, scrape.Body.String(), "/metrics shows the queue at work")

	require.NoError(t, foos.Delete(ctx, "default", "web", metav1.DeleteOptions{}))
	_, err = deployments.Get(ctx, "default", "web", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "collected with its Foo: %v", err)
	got, err := deployments.Get(ctx, "default", "taken", metav1.GetOptions{})
	require.NoError(t, err)
	require.Empty(t, got.OwnerReferences, "someone else's Deployment is left alone")
}

// TestLeaderElection runs two replicas with leader election on one server:
// both sync, only the Lease's holder reconciles, and when it stops (and
// releases the Lease, as on SIGTERM) the other takes over from its warm
// cache and reconciles what the first never saw.
func TestLeaderElection(t *testing.T) {
	srv := fooServer(t)
	cfg := rest.Config{Host: srv.URL()}
	replicas := map[string]*Controller{}
	stops := map[string]func(){}
	for _, id := range []string{"a", "b"} {
		c, err := NewController(cfg, 1, id, "default")
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- c.Run(ctx) }()
		replicas[id], stops[id] = c, func() { cancel(); require.NoError(t, <-done) }
		defer func() { stops[id]() }() // the stop in the map when the test ends
	}
	cl, err := client.New(cfg, client.Options{Scheme: newScheme()})
	require.NoError(t, err)
	defer cl.CloseIdleConnections()
	foos, err := client.For[*Foo](cl)
	require.NoError(t, err)
	deployments, err := client.For[*appsv1.Deployment](cl)
	require.NoError(t, err)
	create := func(name string) {
		_, err := foos.Create(context.Background(), &Foo{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: FooSpec{DeploymentName: name}}, metav1.CreateOptions{})
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			_, err := deployments.Get(context.Background(), "default", name, metav1.GetOptions{})
			return err == nil
		}, 30*time.Second, 10*time.Millisecond, "a leader reconciles %s", name)
	}
	leader := func() string {
		var ids []string
		for id, c := range replicas {
			if c.elector.IsLeader() {
				ids = append(ids, id)
			}
		}
		require.Len(t, ids, 1, "exactly one replica leads")
		return ids[0]
	}
	create("first")
	first := leader()
	stops[first]()
	stops[first] = func() {}
	delete(replicas, first)
	create("second")
	require.NotEqual(t, first, leader(), "the other replica took over")
}

// fooServer starts an in-process fakeapi that serves the Foo CRD.
func fooServer(t *testing.T) *fakeapi.Server {
	t.Helper()
	srv, err := fakeapi.NewServer(fakeapi.Options{})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	data, err := os.ReadFile("testdata/crd.yaml")
	require.NoError(t, err)
	crd := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal(data, &crd.Object))
	_, err = srv.Create(crd)
	require.NoError(t, err)
	return srv
}

// hasEvent reports whether the server holds an event with reason about the
// Foo named name (fakeapi serves core/v1 Events only, by default).
func hasEvent(t *testing.T, srv *fakeapi.Server, name, reason string) bool {
	t.Helper()
	core, err := srv.Objects(corev1.SchemeGroupVersion.WithResource("events"))
	require.NoError(t, err)
	for _, o := range core {
		if e := o.(*corev1.Event); e.InvolvedObject.Name == name && e.InvolvedObject.Kind == "Foo" && e.Reason == reason {
			return true
		}
	}
	return false
}
