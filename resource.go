package informer

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/discovery"
)

// Resource says where on the API server a kind lives: its group, version,
// kind, plural and scope. It is apiresource.Resource, the one type the
// module has for this (fakeapi's ServedResource embeds it), under the name
// the factory's users know. The factory finds it by discovery.Resolver's
// rule: an entry of FactoryOptions.Resources, else the server's discovery,
// else, only when discovery cannot be read, apiresource.Guess. List one in
// FactoryOptions.Resources to override what the server says, or for a
// server without discovery.
type Resource = apiresource.Resource

// ResourceFor finds where obj's kind lives on the API server, exactly as a
// Factory does: the kind from the scheme, then the resource by the
// resolver's rule (discovery.Resolver: override, discovery, guess). The
// write client in client/ uses it, so reads and writes of a type always
// name the same resource. An unregistered type gives an error wrapping
// ErrUnknownType; a kind the server's discovery does not list, one for
// which meta.IsNoMatchError is true.
func ResourceFor(ctx context.Context, scheme *runtime.Scheme, obj runtime.Object, resolver discovery.Resolver) (Resource, error) {
	gvks, _, err := scheme.ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		return Resource{}, fmt.Errorf("%T: %w", obj, ErrUnknownType)
	}
	return resolver.Resource(ctx, gvks[0])
}
