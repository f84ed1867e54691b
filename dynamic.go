package informer

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer/discovery"
)

// ForDynamic returns the factory's informer of any resource, its objects
// held as *unstructured.Unstructured: for custom resources without a Go
// type, such as those of a CRD created at run time (client-go calls this a
// dynamic informer). It is a SharedInformer like any other: a lister,
// indexes, Options.Transform and handlers work exactly as for a typed one,
// and a resource that stops being served (its CRD deleted) is reported once
// and probed until it is back (reflector.KindNotServed).
//
// The objects keep the types of apimachinery's unstructured decoding:
// integers are int64, other numbers float64, so unstructured.NestedInt64
// reads what the server sent. They are shared with every reader, and,
// unless Options.Transform is one that may modify them, they share their
// equal small maps and slices (a condition, a port list) and strings with
// each other: never modify them.
//
// The resource's kind and scope come from FactoryOptions.Resources when it
// names gvr, else from the server's discovery (the factory's discovery
// client, which reads it again once on a miss). A resource neither names
// gives an error wrapping ErrUnknownResource: a CRD not yet created, or a
// misspelt plural. A dynamic informer is keyed apart from a typed one of
// the same resource ("widgets.example.com (dynamic)"): asking for both
// makes two watches.
func ForDynamic(f *Factory, gvr schema.GroupVersionResource) (*SharedInformer[*unstructured.Unstructured], error) {
	r, err := f.resourceForGVR(gvr)
	if err != nil {
		return nil, fmt.Errorf("informer: %s: %w", gvr, err)
	}
	return informerFor[*unstructured.Unstructured](f, r, false)
}

// isUnstructured reports whether T is *unstructured.Unstructured, the type
// of a dynamic informer's objects.
func isUnstructured[T runtime.Object]() bool {
	var zero T
	_, ok := any(zero).(*unstructured.Unstructured)
	return ok
}

// dynamicKeySuffix sets a dynamic informer's name apart from a typed
// informer's of the same resource.
const dynamicKeySuffix = " (dynamic)"

// discoveryTimeout bounds the one discovery request of ForDynamic, which
// has no context of its own.
const discoveryTimeout = 30 * time.Second

// resourceForGVR says where gvr lives and what its objects are (kind and
// scope), by the factory's one rule (discovery.Resolver). A factory
// without a rest.Client (FactoryOptions.ListerWatcher) has no discovery:
// there only the overrides resolve.
func (f *Factory) resourceForGVR(gvr schema.GroupVersionResource) (Resource, error) {
	ctx, cancel := context.WithTimeout(context.Background(), discoveryTimeout)
	defer cancel()
	r, err := ResourceForGVR(ctx, gvr, f.resolver)
	if err != nil && f.rcErr != nil {
		return Resource{}, f.rcErr // why there is no server to ask
	}
	return r, err
}

// ResourceForGVR finds gvr's kind and scope as a Factory does for
// ForDynamic, through resolver (discovery.Resolver.ByResource, where the
// rule lives). The dynamic client
// in client/ uses it, so a resource is read and written as the same kind.
// A resource the server does not serve, or that nothing names when there
// is no server to ask, gives an error wrapping ErrUnknownResource.
func ResourceForGVR(ctx context.Context, gvr schema.GroupVersionResource, resolver discovery.Resolver) (Resource, error) {
	r, err := resolver.ByResource(ctx, gvr)
	switch {
	case err == nil:
		return r, nil
	case meta.IsNoMatchError(err), resolver.Discovery == nil:
		return Resource{}, fmt.Errorf("%w: %w", ErrUnknownResource, err)
	}
	return Resource{}, err
}
