package informer

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer/rest"
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
// names gvr, else from the server's discovery document of gvr's group and
// version, read here (one request per call). A resource neither names
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
// scope). It is the factory's one resolution of a GroupVersionResource:
// an override in FactoryOptions.Resources wins; else the server's
// discovery document of gvr's group and version says. A factory without a
// rest.Client (FactoryOptions.ListerWatcher) has no discovery: there only
// the overrides resolve.
func (f *Factory) resourceForGVR(gvr schema.GroupVersionResource) (Resource, error) {
	ctx, cancel := context.WithTimeout(context.Background(), discoveryTimeout)
	defer cancel()
	r, err := ResourceForGVR(ctx, f.rc, gvr, f.opts.Resources)
	if err != nil && f.rcErr != nil {
		return Resource{}, f.rcErr // why there is no server to ask
	}
	return r, err
}

// ResourceForGVR finds gvr's kind and scope as a Factory does for
// ForDynamic: an override (as in FactoryOptions.Resources) that names gvr
// wins, else the discovery document rc's server serves for gvr's group and
// version says. The dynamic client in client/ uses it, so a resource is
// read and written as the same kind. A resource neither knows gives an
// error wrapping ErrUnknownResource.
func ResourceForGVR(ctx context.Context, rc *rest.Client, gvr schema.GroupVersionResource, overrides []Resource) (Resource, error) {
	for _, r := range overrides {
		if r.GVR() == gvr {
			return r, nil
		}
	}
	if rc == nil {
		return Resource{}, fmt.Errorf("%w: no server to ask", ErrUnknownResource)
	}
	return discoverResource(ctx, rc, gvr)
}

// discoverResource reads the discovery document of gvr's group and
// version (/apis/{group}/{version}, or /api/v1), a metav1.APIResourceList,
// and finds gvr's kind and scope there.
func discoverResource(ctx context.Context, rc *rest.Client, gvr schema.GroupVersionResource) (Resource, error) {
	u := rc.URL(gvr.GroupVersion().WithResource(""), "")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Resource{}, fmt.Errorf("discovery: %w", err)
	}
	req.Header.Set("Accept", rest.ContentTypeJSON)
	resp, err := rc.Do(req)
	if err != nil {
		return Resource{}, fmt.Errorf("discovery: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		err := rc.Error(resp, "discover", gvr.GroupResource())
		if resp.StatusCode == http.StatusNotFound {
			return Resource{}, fmt.Errorf("%w: %s is not served: %w", ErrUnknownResource, gvr.GroupVersion(), err)
		}
		return Resource{}, fmt.Errorf("discovery: %w", err)
	}
	body, err := rest.ReadBody(resp, rc.Config().MaxObjectBytes)
	if err != nil {
		return Resource{}, fmt.Errorf("discovery: %w", err)
	}
	var list metav1.APIResourceList
	if err := json.Unmarshal(body, &list); err != nil {
		return Resource{}, fmt.Errorf("discovery: %s: %w", gvr.GroupVersion(), err)
	}
	for _, ar := range list.APIResources {
		if ar.Name == gvr.Resource && ar.Kind != "" {
			return Resource{Kind: gvr.GroupVersion().WithKind(ar.Kind), Plural: gvr.Resource, ClusterScoped: !ar.Namespaced}, nil
		}
	}
	return Resource{}, fmt.Errorf("%w: %s does not list %q", ErrUnknownResource, gvr.GroupVersion(), gvr.Resource)
}
