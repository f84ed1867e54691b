package apiresource

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Resource says where on the API server a kind lives. It is plain data,
// safe to copy and to share.
type Resource struct {
	// Kind is the group, version and kind of the Go type, as in the scheme.
	Kind schema.GroupVersionKind
	// Plural is the resource's name in URLs, for example "pods". Empty
	// means Guess's plural, which is right for regular English plurals.
	Plural string
	// ClusterScoped is true for kinds that live outside namespaces (Nodes,
	// Namespaces): their URLs have no /namespaces/{ns}/ part. The zero
	// value, namespaced, is what most kinds are.
	ClusterScoped bool
}

// GVR is the resource's group, version and plural name: what a URL holds.
func (r Resource) GVR() schema.GroupVersionResource {
	if r.Plural == "" {
		return r.Kind.GroupVersion().WithResource(Guess(r.Kind).Plural)
	}
	return r.Kind.GroupVersion().WithResource(r.Plural)
}

// Guess returns where a kind lives if it follows the rules the built-in
// kinds follow: the plural is apimachinery's guess
// (meta.UnsafeGuessKindToResource: lower case, then "s", "es" or "ies", and
// nothing for kinds such as Endpoints that are already plural), and the
// kind is namespaced unless it is one of the few built-in cluster-scoped
// kinds of the default scheme. This is the module's only plural guess.
func Guess(gvk schema.GroupVersionKind) Resource {
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return Resource{Kind: gvk, Plural: plural.Resource, ClusterScoped: clusterScoped[gvk.GroupKind()]}
}

// clusterScoped lists the built-in kinds of the default scheme that have no
// namespace. Everything else there is namespaced, as most kinds are.
var clusterScoped = map[schema.GroupKind]bool{
	{Kind: "Namespace"}:        true,
	{Kind: "Node"}:             true,
	{Kind: "PersistentVolume"}: true,
	{Kind: "ComponentStatus"}:  true,
}
