package informer

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer/apiresource"
)

// Resource says where on the API server a kind lives: its group, version,
// kind, plural and scope. It is apiresource.Resource, the one type the
// module has for this (fakeapi's ServedResource embeds it), under the name
// the factory's users know. The factory derives it from the scheme for
// every type it knows (apiresource.Guess); list one in
// FactoryOptions.Resources only when the guess would be wrong: an irregular
// plural, or a cluster-scoped kind of your own.
type Resource = apiresource.Resource

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
	return apiresource.Guess(gvk), nil
}
