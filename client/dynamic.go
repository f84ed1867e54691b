package client

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer"
)

// UnstructuredResource is the dynamic client of one resource: the typed
// client's every request (Get, List, Create, Update, UpdateStatus, Patch,
// Apply, ApplyStatus, Delete, AddFinalizer, RemoveFinalizer) for objects
// held as *unstructured.Unstructured, so for kinds without a Go type, such
// as a CRD's, and for the server-side apply of exactly the fields you set.
// Its errors and retry rules are the typed client's (errors.go,
// RetryOnConflict). Objects are sent as JSON and must name the resource's
// kind (apiVersion and kind), or the request is refused with
// ErrInvalidObject before it is sent; answers must be of that kind too.
// It is safe for concurrent use.
type UnstructuredResource = Resource[*unstructured.Unstructured]

// ForDynamic returns the dynamic client of gvr. Its kind and scope are
// found as informer.ForDynamic finds them (informer.ResourceForGVR, by
// the one rule of discovery.Resolver), so that a dynamic informer and
// client of one resource name it alike. A resource that rule does not
// resolve gives an error wrapping informer.ErrUnknownResource.
func ForDynamic(ctx context.Context, c *Client, gvr schema.GroupVersionResource) (*UnstructuredResource, error) {
	res, err := informer.ResourceForGVR(ctx, gvr, c.resolver)
	if err != nil {
		return nil, fmt.Errorf("client: %s: %w", gvr, err)
	}
	return ForUnstructured(c, res), nil
}

// ForUnstructured returns the dynamic client of res's objects, where res
// is known already (a typed client's Resource, or one you spell out), with
// no discovery.
func ForUnstructured(c *Client, res informer.Resource) *UnstructuredResource {
	return &UnstructuredResource{c: c, res: res}
}
