package informer

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer/reflector/wire"
)

// Resource says where on the API server a kind lives. The factory derives it
// from the scheme for every type it knows; list one in
// FactoryOptions.Resources only when the guess would be wrong: an irregular
// plural, or a cluster-scoped kind of your own.
type Resource struct {
	// Kind is the group, version and kind of the Go type, as in the scheme.
	Kind schema.GroupVersionKind
	// Plural is the resource's name in URLs, for example "pods".
	Plural string
	// ClusterScoped is true for kinds that live outside namespaces (Nodes,
	// Namespaces).
	ClusterScoped bool
}

// GVR is the resource's group, version and plural name: what the wire needs.
func (r Resource) GVR() schema.GroupVersionResource {
	return r.Kind.GroupVersion().WithResource(r.Plural)
}

// clusterScoped lists the built-in kinds of the default scheme that have no
// namespace. Everything else is namespaced, as most kinds are.
var clusterScoped = map[schema.GroupKind]bool{
	{Kind: "Namespace"}:        true,
	{Kind: "Node"}:             true,
	{Kind: "PersistentVolume"}: true,
	{Kind: "ComponentStatus"}:  true,
}

// NewScheme returns a scheme with the kinds the factory serves out of the
// box: core/v1 and apps/v1, plus meta/v1's list and watch types. It is the
// HTTP client's default scheme (wire.NewScheme), so that what the factory can
// name and what the wire can decode are the same set. Register your own types
// into it (or into your own scheme) and pass it in FactoryOptions.Scheme.
func NewScheme() *runtime.Scheme { return wire.NewScheme() }

// ResourceFor finds where obj's kind lives on the API server, exactly as a
// Factory does: through the scheme, with the overrides (as in
// FactoryOptions.Resources) taking precedence. The write client in client/
// uses it, so reads and writes of a type always name the same resource. An
// unregistered type gives an error wrapping ErrUnknownType.
func ResourceFor(scheme *runtime.Scheme, obj runtime.Object, overrides []Resource) (Resource, error) {
	return resourceFor(scheme, obj, overrides)
}

// resourceFor finds the resource for a Go type through the scheme, with the
// overrides taking precedence.
func resourceFor(scheme *runtime.Scheme, obj runtime.Object, overrides []Resource) (Resource, error) {
	gvks, _, err := scheme.ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		return Resource{}, fmt.Errorf("%T: %w", obj, ErrUnknownType)
	}
	gvk := gvks[0]
	for _, r := range overrides {
		if r.Kind == gvk {
			return r, nil
		}
	}
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return Resource{Kind: gvk, Plural: plural.Resource, ClusterScoped: clusterScoped[gvk.GroupKind()]}, nil
}
