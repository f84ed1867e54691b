package discovery_test

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/discovery"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/rest"
)

// Where a kind lives, as the server says: its plural and its scope, and
// the other way, the kind of a resource.
func ExampleClient_Resource() {
	srv, _ := fakeapi.NewServer(fakeapi.Options{})
	defer srv.Close()
	rc, _ := rest.New(rest.Config{Host: srv.URL()})
	defer rc.CloseIdleConnections()
	c := discovery.New(rc, discovery.Options{})

	jobs, _ := c.Resource(context.Background(), batchv1.SchemeGroupVersion.WithKind("Job"))
	fmt.Println(jobs.GVR(), "cluster-scoped:", jobs.ClusterScoped)
	kind, _ := c.Mapper().KindFor(schema.GroupVersionResource{Resource: "storageclasses"})
	fmt.Println(kind)
	// Output:
	// batch/v1, Resource=jobs cluster-scoped: false
	// storage.k8s.io/v1, Kind=StorageClass
}

// The one rule for where a kind lives: an override wins, then discovery,
// and a guess only when discovery cannot be read.
func ExampleResolver() {
	srv, _ := fakeapi.NewServer(fakeapi.Options{})
	defer srv.Close()
	rc, _ := rest.New(rest.Config{Host: srv.URL()})
	defer rc.CloseIdleConnections()
	ctx := context.Background()
	widget := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}

	served := discovery.Resolver{Discovery: discovery.New(rc, discovery.Options{})}
	_, err := served.Resource(ctx, widget)
	fmt.Println("not served:", meta.IsNoMatchError(err))

	override := apiresource.Resource{Kind: widget, Plural: "gizmos", ClusterScoped: true}
	r, _ := discovery.Resolver{Overrides: []apiresource.Resource{override}, Discovery: served.Discovery}.Resource(ctx, widget)
	fmt.Println("override:", r.GVR().Resource, r.ClusterScoped)

	r, _ = discovery.Resolver{}.Resource(ctx, widget) // no server: the guess
	fmt.Println("guess:", r.GVR().Resource, r.ClusterScoped)
	// Output:
	// not served: true
	// override: gizmos true
	// guess: widgets false
}
