package fakeapi

import (
	"encoding/json"
	"net/http"
	"runtime"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
)

// Discovery is how clients learn what a server serves: kubectl maps
// "kubectl get deploy" to /apis/apps/v1/namespaces/x/deployments through
// these documents. We serve the legacy form here, and the aggregated form
// (discovery_aggregated.go) to clients that ask for it first, as
// kube-apiserver does; both describe the same registry.

// serverVersion is what /version reports.
var serverVersion = version.Info{
	Major: "1", Minor: "37", GitVersion: "v1.37.2-fakeapi", GitCommit: "fakeapi",
	GitTreeState: "clean", BuildDate: "2026-01-01T00:00:00Z", GoVersion: runtime.Version(),
	Compiler: runtime.Compiler, Platform: runtime.GOOS + "/" + runtime.GOARCH,
}

// isDiscoveryPath tells the discovery documents and health checks apart
// from resource paths.
func isDiscoveryPath(path string) bool {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(segs) == 1:
		return true // /version, /api, /apis, /healthz, ... (or 404)
	case segs[0] == "api":
		return len(segs) == 2
	case segs[0] == "apis":
		return len(segs) <= 3
	}
	return false
}

func (s *Server) serveDiscovery(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		s.writeError(w, r, notFoundPath())
		return
	}
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case segs[0] == "version" && len(segs) == 1:
		s.writeJSONDocument(w, serverVersion)
	case segs[0] == "healthz" || segs[0] == "readyz" || segs[0] == "livez":
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok"))
	case (segs[0] == "api" || segs[0] == "apis") && len(segs) == 1:
		s.serveRoot(w, r, segs[0] == "api")
	case segs[0] == "api" && len(segs) == 2:
		s.serveResourceList(w, r, schema.GroupVersion{Version: segs[1]})
	case segs[0] == "apis" && !s.reg.servesGroup(segs[1]):
		notFoundText(w)
	case segs[0] == "apis" && len(segs) == 2:
		s.serveGroup(w, r, segs[1])
	case segs[0] == "apis" && len(segs) == 3:
		s.serveResourceList(w, r, schema.GroupVersion{Group: segs[1], Version: segs[2]})
	default:
		notFoundText(w)
	}
}

// serveRoot answers /api or /apis, in the aggregated form when the client
// asks for it first (discovery_aggregated.go).
func (s *Server) serveRoot(w http.ResponseWriter, r *http.Request, core bool) {
	enc, aggregated, err := s.discoveryEncoding(r)
	switch {
	case err != nil:
		s.writeError(w, r, err)
	case aggregated:
		s.serveAggregated(w, r, enc, core)
	case core:
		s.writeObject(w, r, enc, http.StatusOK, &metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
			Versions: s.versionsOf(""), ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{
				{ClientCIDR: "0.0.0.0/0", ServerAddress: r.Host}}})
	default:
		s.writeObject(w, r, enc, http.StatusOK, &metav1.APIGroupList{
			TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: s.apiGroups()})
	}
}

// versionsOf lists the served versions of a group.
func (s *Server) versionsOf(group string) []string {
	var out []string
	for _, gv := range s.reg.groupVersions() {
		if gv.Group == group {
			out = append(out, gv.Version)
		}
	}
	return out
}

// apiGroups describes every named group (the core group is under /api).
func (s *Server) apiGroups() []metav1.APIGroup {
	var groups []metav1.APIGroup
	seen := map[string]bool{}
	for _, gv := range s.reg.groupVersions() {
		if gv.Group == "" || seen[gv.Group] {
			continue
		}
		seen[gv.Group] = true
		groups = append(groups, s.apiGroup(gv.Group))
	}
	return groups
}

func (s *Server) apiGroup(group string) metav1.APIGroup {
	g := metav1.APIGroup{Name: group}
	for _, v := range s.versionsOf(group) {
		g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{GroupVersion: group + "/" + v, Version: v})
	}
	if len(g.Versions) > 0 {
		g.PreferredVersion = g.Versions[0]
	}
	return g
}

func (s *Server) serveGroup(w http.ResponseWriter, r *http.Request, group string) {
	g := s.apiGroup(group)
	if len(g.Versions) == 0 {
		s.writeError(w, r, notFoundPath())
		return
	}
	g.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
	s.writeDocument(w, r, &g)
}

// serveResourceList describes the resources of one group version, with
// their verbs and scope, and their status subresources.
func (s *Server) serveResourceList(w http.ResponseWriter, r *http.Request, gv schema.GroupVersion) {
	// The real server's APIResourceList carries a kind, and an apiVersion
	// only for the named groups (/apis/...), not for the core group.
	list := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList"},
		GroupVersion: gv.String(), APIResources: []metav1.APIResource{}}
	if gv.Group != "" {
		list.APIVersion = "v1"
	}
	for _, ri := range s.reg.all() {
		if ri.gvr.GroupVersion() != gv {
			continue
		}
		list.APIResources = append(list.APIResources, metav1.APIResource{
			Name: ri.gvr.Resource, SingularName: strings.ToLower(ri.Kind.Kind), Namespaced: !ri.ClusterScoped,
			Kind: ri.Kind.Kind, ShortNames: ri.ShortNames, Categories: ri.Categories, Verbs: ri.verbs(),
		})
		for _, sub := range ri.subresources() {
			res := metav1.APIResource{Name: ri.gvr.Resource + "/" + sub.name, Namespaced: !ri.ClusterScoped,
				Kind: sub.kind.Kind, Group: sub.kind.Group, Version: sub.kind.Version, Verbs: sub.verbs}
			list.APIResources = append(list.APIResources, res)
		}
	}
	if len(list.APIResources) == 0 {
		s.writeError(w, r, notFoundPath())
		return
	}
	sort.SliceStable(list.APIResources, func(i, j int) bool { return list.APIResources[i].Name < list.APIResources[j].Name })
	s.writeDocument(w, r, list)
}

// writeDocument sends a discovery document in the negotiated encoding.
func (s *Server) writeDocument(w http.ResponseWriter, r *http.Request, doc kruntime.Object) {
	enc, err := s.negotiate(r, true)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	enc.as = asFull
	s.writeObject(w, r, enc, http.StatusOK, doc)
}

// writeJSONDocument sends a plain JSON document (for /version, which is not
// a Kubernetes object).
func (s *Server) writeJSONDocument(w http.ResponseWriter, doc any) {
	data, _ := json.Marshal(doc)
	w.Header().Set("Content-Type", mediaJSON)
	_, _ = w.Write(data)
}
