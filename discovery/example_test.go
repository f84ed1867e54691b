package discovery_test

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

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
