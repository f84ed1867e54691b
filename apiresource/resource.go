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

// clusterScoped lists the built-in kinds that have no namespace, as
// kube-apiserver serves them (its OpenAPI document, recorded in fakeapi,
// is the reference: fakeapi's TestDefaultResourcesHaveTheRealScopes checks
// this list against it). Everything else is namespaced, as most kinds are.
var clusterScoped = groupKinds(map[string][]string{
	"":                             {"Namespace", "Node", "PersistentVolume", "ComponentStatus"},
	"admissionregistration.k8s.io": {"MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding", "MutatingWebhookConfiguration", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "ValidatingWebhookConfiguration"},
	"apiextensions.k8s.io":         {"CustomResourceDefinition"},
	"apiregistration.k8s.io":       {"APIService"},
	"authentication.k8s.io":        {"SelfSubjectReview", "TokenReview"},
	"authorization.k8s.io":         {"SelfSubjectAccessReview", "SelfSubjectRulesReview", "SubjectAccessReview"},
	"certificates.k8s.io":          {"CertificateSigningRequest", "ClusterTrustBundle"},
	"flowcontrol.apiserver.k8s.io": {"FlowSchema", "PriorityLevelConfiguration"},
	"internal.apiserver.k8s.io":    {"StorageVersion"},
	"networking.k8s.io":            {"IngressClass", "IPAddress", "ServiceCIDR"},
	"node.k8s.io":                  {"RuntimeClass"},
	"rbac.authorization.k8s.io":    {"ClusterRole", "ClusterRoleBinding"},
	"resource.k8s.io":              {"DeviceClass", "DeviceTaintRule", "ResourceSlice"},
	"scheduling.k8s.io":            {"PriorityClass"},
	"storage.k8s.io":               {"CSIDriver", "CSINode", "StorageClass", "VolumeAttachment", "VolumeAttributesClass"},
	"storagemigration.k8s.io":      {"StorageVersionMigration"},
})

// groupKinds turns kinds listed by group into a set.
func groupKinds(byGroup map[string][]string) map[schema.GroupKind]bool {
	set := map[schema.GroupKind]bool{}
	for group, kinds := range byGroup {
		for _, kind := range kinds {
			set[schema.GroupKind{Group: group, Kind: kind}] = true
		}
	}
	return set
}
