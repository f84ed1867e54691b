package discovery

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer/apiresource"
)

// Mapper is a meta.RESTMapper (and a meta.RESTMapperWithContext) over a
// Client's latest Snapshot: kind to resource and back, with scope and
// preferred version, exactly as the server named them. A lookup that
// finds nothing (meta.IsNoMatchError) refreshes the Snapshot (within the
// Client's interval) and tries once more, so that a resource served since
// the last read, such as a CustomResourceDefinition's, is found. A lookup
// when no Snapshot can be read fails with an error wrapping
// ErrUnreachable.
//
// The methods without a context use context.Background(), bounded by the
// Client's Options.Timeout. A Mapper is safe for concurrent use.
type Mapper struct{ c *Client }

// Mapper returns the REST mapper over c's documents.
func (c *Client) Mapper() *Mapper { return &Mapper{c: c} }

var (
	_ meta.RESTMapper                      = (*Mapper)(nil)
	_ meta.ResettableRESTMapperWithContext = (*Mapper)(nil)
	_ meta.ResettableRESTMapper            = (*Mapper)(nil)
)

// lookup runs fn on the latest mapper, and, on a miss, once more on a
// refreshed one, unless this very lookup read the documents: nothing
// fresher could be had.
func (m *Mapper) lookup(ctx context.Context, fn func(meta.RESTMapper) error) error {
	snap, read, err := m.c.loadRead(ctx, false)
	if err != nil {
		return err
	}
	err = fn(snap.mapper)
	if !meta.IsNoMatchError(err) || read {
		return err
	}
	fresh, ferr := m.c.Refresh(ctx)
	if ferr != nil || fresh == snap {
		return err
	}
	return fn(fresh.mapper)
}

// Resource says where gvk lives, as the server's discovery says: its
// plural and scope, at exactly gvk's version. A kind the server does not
// serve at that version gives an error for which meta.IsNoMatchError is
// true, unless its group version's document could not be read (legacy
// form): that error wraps ErrUnreachable.
func (c *Client) Resource(ctx context.Context, gvk schema.GroupVersionKind) (apiresource.Resource, error) {
	mapping, err := c.Mapper().RESTMappingWithContext(ctx, gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		if snap, serr := c.Snapshot(ctx); serr == nil && snap.Failed[gvk.GroupVersion()] != nil {
			return apiresource.Resource{}, fmt.Errorf("%w: %s: %w", ErrUnreachable, gvk.GroupVersion(), snap.Failed[gvk.GroupVersion()])
		}
	}
	if err != nil {
		return apiresource.Resource{}, fmt.Errorf("discovery: %s: %w", gvk, err)
	}
	return apiresource.Resource{Kind: gvk, Plural: mapping.Resource.Resource,
		ClusterScoped: mapping.Scope.Name() == meta.RESTScopeNameRoot}, nil
}

// ByResource says which kind the resource gvr holds, and its scope, as
// the server's discovery says; gvr must name a group, a version and a
// plural. A resource the server does not serve gives an error for which
// meta.IsNoMatchError is true.
func (c *Client) ByResource(ctx context.Context, gvr schema.GroupVersionResource) (apiresource.Resource, error) {
	gvk, err := c.Mapper().KindForWithContext(ctx, gvr)
	if err != nil {
		return apiresource.Resource{}, fmt.Errorf("discovery: %s: %w", gvr, err)
	}
	return c.Resource(ctx, gvk)
}

// background is the context of the methods that take none.
func background() context.Context { return context.Background() }

// KindForWithContext takes a partial resource and returns the one kind it matches.
func (m *Mapper) KindForWithContext(ctx context.Context, r schema.GroupVersionResource) (out schema.GroupVersionKind, err error) {
	err = m.lookup(ctx, func(rm meta.RESTMapper) (e error) { out, e = rm.KindFor(r); return e })
	return out, err
}

// KindsForWithContext takes a partial resource and returns every kind it matches, by priority.
func (m *Mapper) KindsForWithContext(ctx context.Context, r schema.GroupVersionResource) (out []schema.GroupVersionKind, err error) {
	err = m.lookup(ctx, func(rm meta.RESTMapper) (e error) { out, e = rm.KindsFor(r); return e })
	return out, err
}

// ResourceForWithContext takes a partial resource and returns the one resource it matches.
func (m *Mapper) ResourceForWithContext(ctx context.Context, r schema.GroupVersionResource) (out schema.GroupVersionResource, err error) {
	err = m.lookup(ctx, func(rm meta.RESTMapper) (e error) { out, e = rm.ResourceFor(r); return e })
	return out, err
}

// ResourcesForWithContext takes a partial resource and returns every resource it matches, by priority.
func (m *Mapper) ResourcesForWithContext(ctx context.Context, r schema.GroupVersionResource) (out []schema.GroupVersionResource, err error) {
	err = m.lookup(ctx, func(rm meta.RESTMapper) (e error) { out, e = rm.ResourcesFor(r); return e })
	return out, err
}

// RESTMappingWithContext returns where a kind lives: at the first of
// versions the server serves, or, with none given, at the group's
// preferred version.
func (m *Mapper) RESTMappingWithContext(ctx context.Context, gk schema.GroupKind, versions ...string) (out *meta.RESTMapping, err error) {
	err = m.lookup(ctx, func(rm meta.RESTMapper) (e error) { out, e = rm.RESTMapping(gk, versions...); return e })
	return out, err
}

// RESTMappingsWithContext returns every place a kind lives (or those of versions).
func (m *Mapper) RESTMappingsWithContext(ctx context.Context, gk schema.GroupKind, versions ...string) (out []*meta.RESTMapping, err error) {
	err = m.lookup(ctx, func(rm meta.RESTMapper) (e error) { out, e = rm.RESTMappings(gk, versions...); return e })
	return out, err
}

// ResourceSingularizerWithContext returns the singular name of a plural resource.
func (m *Mapper) ResourceSingularizerWithContext(ctx context.Context, resource string) (out string, err error) {
	err = m.lookup(ctx, func(rm meta.RESTMapper) (e error) { out, e = rm.ResourceSingularizer(resource); return e })
	return out, err
}

// ResetWithContext asks for the documents to be read again, within the
// Client's interval: what meta.MaybeResetRESTMapper calls after a miss.
func (m *Mapper) ResetWithContext(ctx context.Context) { _, _ = m.c.Refresh(ctx) }

// KindFor is KindForWithContext without a context.
func (m *Mapper) KindFor(r schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	return m.KindForWithContext(background(), r)
}

// KindsFor is KindsForWithContext without a context.
func (m *Mapper) KindsFor(r schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	return m.KindsForWithContext(background(), r)
}

// ResourceFor is ResourceForWithContext without a context.
func (m *Mapper) ResourceFor(r schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	return m.ResourceForWithContext(background(), r)
}

// ResourcesFor is ResourcesForWithContext without a context.
func (m *Mapper) ResourcesFor(r schema.GroupVersionResource) ([]schema.GroupVersionResource, error) {
	return m.ResourcesForWithContext(background(), r)
}

// RESTMapping is RESTMappingWithContext without a context.
func (m *Mapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	return m.RESTMappingWithContext(background(), gk, versions...)
}

// RESTMappings is RESTMappingsWithContext without a context.
func (m *Mapper) RESTMappings(gk schema.GroupKind, versions ...string) ([]*meta.RESTMapping, error) {
	return m.RESTMappingsWithContext(background(), gk, versions...)
}

// ResourceSingularizer is ResourceSingularizerWithContext without a context.
func (m *Mapper) ResourceSingularizer(resource string) (string, error) {
	return m.ResourceSingularizerWithContext(background(), resource)
}

// Reset is ResetWithContext without a context.
func (m *Mapper) Reset() { m.ResetWithContext(background()) }

// isUnreachable tells a failure to read discovery from an answer.
func isUnreachable(err error) bool { return errors.Is(err, ErrUnreachable) }
