package fakeapi

import (
	"net/http"
	"sort"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Aggregated discovery (apidiscovery.k8s.io/v2): one document for /api and
// one for /apis that describe every group, version and resource at once,
// instead of one request per group version. kubectl and client-go ask for
// it first, with an Accept header that names its group, version and kind
//
//	application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList
//
// (or the protobuf form), followed by the legacy form as a fallback.

const (
	discoveryGroup = "apidiscovery.k8s.io"
	discoveryList  = "APIGroupDiscoveryList"
)

// discoveryEncoding picks, for /api or /apis, the first acceptable of
// the aggregated and legacy forms in the client's order of preference.
func (s *Server) discoveryEncoding(r *http.Request) (enc encoding, aggregated bool, err error) {
	header := r.Header.Get("Accept")
	if strings.TrimSpace(header) == "" {
		return s.encodingFor(mediaJSON, asFull), false, nil
	}
	for _, c := range parseAccept(header) {
		if c.params["g"] == discoveryGroup && c.params["v"] == "v2" && c.params["as"] == discoveryList {
			switch c.mediaType {
			case mediaJSON, mediaProtobuf:
				enc := s.encodingFor(c.mediaType, asFull)
				enc.mediaType = c.mediaType + ";g=" + discoveryGroup + ";v=v2;as=" + discoveryList
				return enc, true, nil
			}
			continue
		}
		if enc, ok := s.acceptable(c, true); ok && enc.as == asFull {
			return enc, false, nil
		}
	}
	return encoding{}, false, notAcceptable()
}

// serveAggregated answers /api (core) or /apis (every named group) with
// the aggregated document.
func (s *Server) serveAggregated(w http.ResponseWriter, r *http.Request, enc encoding, core bool) {
	list := &apidiscoveryv2.APIGroupDiscoveryList{
		TypeMeta: metav1.TypeMeta{Kind: discoveryList, APIVersion: discoveryGroup + "/v2"},
		Items:    []apidiscoveryv2.APIGroupDiscovery{},
	}
	// byGroup holds indexes, not pointers: appending a group may move
	// the others, and a pointer would then add a group's second version
	// to a stale copy.
	byGroup := map[string]int{}
	for _, gv := range s.reg.groupVersions() {
		if (gv.Group == "") != core {
			continue
		}
		i, ok := byGroup[gv.Group]
		if !ok {
			list.Items = append(list.Items, apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: gv.Group}})
			i = len(list.Items) - 1
			byGroup[gv.Group] = i
		}
		g := &list.Items[i]
		g.Versions = append(g.Versions, apidiscoveryv2.APIVersionDiscovery{
			Version: gv.Version, Resources: s.discoveredResources(gv),
			Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent,
		})
	}
	w.Header().Set("Cache-Control", "public")
	w.Header().Add("Vary", "Accept")
	s.writeObject(w, r, enc, http.StatusOK, list)
}

// discoveredResources describes the resources of one group version.
func (s *Server) discoveredResources(gv schema.GroupVersion) []apidiscoveryv2.APIResourceDiscovery {
	var out []apidiscoveryv2.APIResourceDiscovery
	for _, ri := range s.reg.all() {
		if ri.gvr.GroupVersion() != gv {
			continue
		}
		scope := apidiscoveryv2.ScopeCluster
		if !ri.ClusterScoped {
			scope = apidiscoveryv2.ScopeNamespace
		}
		d := apidiscoveryv2.APIResourceDiscovery{
			Resource: ri.gvr.Resource, ResponseKind: &metav1.GroupVersionKind{Kind: ri.Kind.Kind},
			Scope: scope, SingularResource: strings.ToLower(ri.Kind.Kind), Verbs: ri.verbs(),
			ShortNames: ri.ShortNames, Categories: ri.Categories,
		}
		for _, sub := range ri.subresources() {
			d.Subresources = append(d.Subresources, apidiscoveryv2.APISubresourceDiscovery{
				Subresource: sub.name, Verbs: sub.verbs,
				ResponseKind: &metav1.GroupVersionKind{Group: sub.kind.Group, Version: sub.kind.Version, Kind: sub.kind.Kind},
			})
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Resource < out[j].Resource })
	return out
}

// verbs are the resource's verbs, in discovery's order: every verb for
// every resource, but deletecollection for namespaces.
func (ri *resourceInfo) verbs() []string {
	if ri.review != nil {
		return []string{verbCreate}
	}
	if ri.Kind == namespaceKind {
		return []string{verbCreate, verbDelete, verbGet, verbList, verbPatch, verbUpdate, verbWatch}
	}
	return []string{verbCreate, verbDelete, verbDeleteCollection, verbGet, verbList, verbPatch, verbUpdate, verbWatch}
}

// subresource is one served subresource of a resource, for discovery.
type subresource struct {
	name  string
	kind  schema.GroupVersionKind // empty group and version: the resource's own kind
	verbs []string
}

// subresources lists the resource's served subresources, in name order.
func (ri *resourceInfo) subresources() []subresource {
	var out []subresource
	if ri.ScaleSubresource {
		out = append(out, subresource{name: "scale", kind: scaleKind, verbs: []string{verbGet, verbPatch, verbUpdate}})
	}
	if ri.StatusSubresource {
		out = append(out, subresource{name: "status", kind: schema.GroupVersionKind{Kind: ri.Kind.Kind},
			verbs: []string{verbGet, verbPatch, verbUpdate}})
	}
	return out
}
