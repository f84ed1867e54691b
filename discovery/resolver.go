package discovery

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer/apiresource"
)

// Resolver is the module's one rule for where a kind lives, for the
// informer factory (informer.For) and package client alike, so that a type
// is read and written at the same place:
//
//  1. an explicit override (Overrides, which FactoryOptions.Resources and
//     client.Options.Resources fill) always wins;
//  2. else the server's discovery (Discovery), refreshed once on a miss;
//  3. else, only when discovery cannot be read at all (ErrUnreachable),
//     or when there is no server to ask (Discovery is nil: an informer fed
//     from memory), apiresource.Guess.
//
// A kind that discovery reads fine but does not list is an error
// (meta.IsNoMatchError): the server does not serve it, and a guessed URL
// would only earn a 404. The zero value guesses every kind.
type Resolver struct {
	Overrides []apiresource.Resource
	Discovery *Client
}

// Resource finds where gvk lives by the rule above.
func (r Resolver) Resource(ctx context.Context, gvk schema.GroupVersionKind) (apiresource.Resource, error) {
	for _, o := range r.Overrides {
		if o.Kind == gvk {
			return o, nil
		}
	}
	if r.Discovery == nil {
		return apiresource.Guess(gvk), nil
	}
	res, err := r.Discovery.Resource(ctx, gvk)
	if isUnreachable(err) {
		return apiresource.Guess(gvk), nil
	}
	return res, err
}

// ByResource finds the kind and scope of the resource gvr names, by the
// same rule: an override for that resource wins, then discovery. A dynamic
// (unstructured) informer or client, which starts from a resource rather
// than a Go type, resolves through it. When discovery cannot be read there
// is nothing to guess a kind from: the error wraps ErrUnreachable.
func (r Resolver) ByResource(ctx context.Context, gvr schema.GroupVersionResource) (apiresource.Resource, error) {
	for _, o := range r.Overrides {
		if o.GVR() == gvr {
			return o, nil
		}
	}
	if r.Discovery == nil {
		return apiresource.Resource{}, fmt.Errorf("%w: no server to ask about %s", ErrUnreachable, gvr)
	}
	return r.Discovery.ByResource(ctx, gvr)
}
