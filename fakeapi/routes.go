package fakeapi

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer/fakeapi/internal/admission"
	"github.com/seed31a95821/informer/fakeapi/internal/apply"
)

// The URL layout is the real server's:
//
//	/api/v1/{resource}                              cluster-scoped, or all namespaces
//	/api/v1/{resource}/{name}[/status]              cluster-scoped object
//	/api/v1/namespaces/{ns}/{resource}              one namespace
//	/api/v1/namespaces/{ns}/{resource}/{name}[/status]
//	/apis/{group}/{version}/...                     the same below a named group
//
// plus discovery (/api, /apis, /version, group-version documents) and this
// server's admin endpoints under /fakeapi/v1/.

// Verbs, as the real server names them in discovery and audit logs.
const (
	verbGet    = "get"
	verbList   = "list"
	verbWatch  = "watch"
	verbCreate = "create"
	verbUpdate = "update"
	verbPatch  = "patch"
	verbDelete = "delete"
)

// requestInfo is what the URL and method say about a resource request.
type requestInfo struct {
	// res is the resource the request reads and writes: for a request on
	// a view, the stored resource, and view is the version the client
	// speaks (views.go).
	res         *resourceInfo
	view        *resourceInfo
	verb        string
	namespace   string
	name        string
	subresource string
	// fieldManager is who writes, for managedFields (apply.ManagerName).
	fieldManager string
	// fieldValidation is what to do with unknown fields (admission.Strict,
	// Warn or Ignore).
	fieldValidation string
	// warnings are the response's headers, for Warning headers.
	warnings http.Header
	// dropped is the DropWatches generation current when the request
	// arrived (see Server.dropGeneration); only watches use it.
	dropped <-chan struct{}
}

// serveHTTP is the root handler: bookkeeping, authentication and body
// limits first, then dispatch by path.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.conns.begin() {
		s.writeError(w, r, apierrors.NewServiceUnavailable(errServerClosed.Error()))
		return
	}
	defer s.conns.end()
	defer s.recoverPanic(w, r)
	if !s.authorized(r) {
		s.writeError(w, r, apierrors.NewUnauthorized("Unauthorized"))
		return
	}
	if err := s.limitBody(w, r); err != nil {
		s.writeError(w, r, err)
		return
	}
	switch path := r.URL.Path; {
	case strings.HasPrefix(path, adminPrefix):
		s.serveAdmin(w, r)
	case strings.HasPrefix(path, "/openapi/"):
		s.serveOpenAPI(w, r)
	case isDiscoveryPath(path):
		s.serveDiscovery(w, r)
	default:
		s.serveResource(w, r)
	}
}

// serveOpenAPI answers /openapi/v2, /openapi/v3 and /openapi/v3/{gv} with
// the real server's documents (fakeapi/internal/openapi), which kubectl explain,
// kubectl's validation and server-side apply read.
func (s *Server) serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		s.writeError(w, r, notFoundPath())
		return
	}
	if err := s.openapi.Load(s.reg.groupVersions()); err != nil {
		s.writeError(w, r, err)
		return
	}
	if !s.openapi.Serve(w, r) {
		notFoundText(w)
	}
}

// recoverPanic turns a handler bug into a 500 Status instead of a dropped
// connection, so hostile input can never take the server down. Deliberate
// aborts (http.ErrAbortHandler, used to cut a watch frame) pass through.
func (s *Server) recoverPanic(w http.ResponseWriter, r *http.Request) {
	v := recover()
	if v == nil {
		return
	}
	if v == http.ErrAbortHandler {
		panic(v)
	}
	s.writeError(w, r, apierrors.NewInternalError(fmt.Errorf("fakeapi: handler panic: %v", v)))
}

func (s *Server) serveResource(w http.ResponseWriter, r *http.Request) {
	// Taken first, before any fault can hold the request: see
	// dropGeneration.
	dropped := s.dropGeneration()
	req, err := s.route(r)
	if err == nil {
		req.fieldValidation, err = admission.FieldValidation(r.URL.Query().Get("fieldValidation"), req.verb)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	req.warnings = w.Header()
	req.dropped = dropped
	if err := s.faults.before(r.Context(), s.closed, req.verb, req.res.gvr.Resource); err != nil {
		s.writeError(w, r, err)
		return
	}
	if req.subresource == "scale" {
		s.serveScale(w, r, req)
		return
	}
	if req.res.review != nil {
		s.serveReview(w, r, req)
		return
	}
	switch req.verb {
	case verbGet:
		s.serveGet(w, r, req)
	case verbList:
		s.serveList(w, r, req)
	case verbWatch:
		s.serveWatch(w, r, req)
	case verbCreate:
		s.serveCreate(w, r, req)
	case verbUpdate:
		s.serveUpdate(w, r, req)
	case verbPatch:
		s.servePatch(w, r, req)
	case verbDelete:
		s.serveDelete(w, r, req)
	case verbDeleteCollection:
		s.serveDeleteCollection(w, r, req)
	}
}

// route resolves the URL and method to a resource and verb.
func (s *Server) route(r *http.Request) (requestInfo, error) {
	gv, rest, ok := splitAPIPath(r.URL.Path)
	if !ok || !s.reg.servesGroup(gv.Group) {
		return requestInfo{}, errNoRoute
	}
	if len(rest) == 0 || slices.Contains(rest, "") {
		return requestInfo{}, notFoundPath()
	}
	var req requestInfo
	// "namespaces/{ns}/{resource}..." is a namespaced path unless what
	// follows the namespace name is a namespace subresource.
	if rest[0] == "namespaces" && len(rest) >= 3 && rest[2] != "status" {
		req.namespace, rest = rest[1], rest[2:]
	}
	ri, found := s.reg.byResource(gv.WithResource(rest[0]))
	if !found || len(rest) > 3 {
		return requestInfo{}, notFoundPath()
	}
	req.res = ri
	if ri.view != nil {
		req.view, req.res = ri, ri.view.storage
	}
	if len(rest) > 1 {
		req.name = rest[1]
	}
	if len(rest) > 2 {
		req.subresource = rest[2]
	}
	if err := checkScope(req); err != nil {
		return requestInfo{}, err
	}
	verb, err := verbOf(r, req)
	req.verb = verb
	req.fieldManager = apply.ManagerName(r)
	return req, err
}

// splitAPIPath splits "/api/v1/x/y" or "/apis/g/v/x/y" into the group
// version and the remaining segments.
func splitAPIPath(path string) (schema.GroupVersion, []string, bool) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(segs) >= 2 && segs[0] == "api":
		return schema.GroupVersion{Version: segs[1]}, segs[2:], true
	case len(segs) >= 3 && segs[0] == "apis":
		return schema.GroupVersion{Group: segs[1], Version: segs[2]}, segs[3:], true
	}
	return schema.GroupVersion{}, nil, false
}

// checkScope rejects paths that do not fit the resource's scope: a
// cluster-scoped resource under a namespace, a namespaced object without
// one, or an unknown subresource. (route has already refused an empty path
// segment: "namespaces//pods" names no namespace, not all of them.)
func checkScope(req requestInfo) error {
	switch {
	case req.res.ClusterScoped && req.namespace != "":
		return notFoundPath()
	case !req.res.ClusterScoped && req.namespace == "" && req.name != "":
		return notFoundPath()
	case req.subresource == "scale" && !req.res.ScaleSubresource:
		return notFoundPath()
	case req.subresource != "" && req.subresource != "status" && req.subresource != "scale":
		return notFoundPath()
	case req.name == "" && req.subresource != "":
		return notFoundPath()
	}
	return nil
}

// verbOf maps the HTTP method on a collection or an object to a verb.
func verbOf(r *http.Request, req requestInfo) (string, error) {
	collection := req.name == ""
	switch {
	case r.Method == http.MethodGet && collection && watchRequested(r.URL.Query()["watch"]):
		return verbWatch, nil
	case r.Method == http.MethodGet && collection:
		return verbList, nil
	case r.Method == http.MethodGet:
		return verbGet, nil
	case r.Method == http.MethodPost && collection && req.res.ClusterScoped == (req.namespace == ""):
		return verbCreate, nil
	case r.Method == http.MethodPut && !collection:
		return verbUpdate, nil
	case r.Method == http.MethodPatch && !collection:
		return verbPatch, nil
	case r.Method == http.MethodDelete && !collection:
		return verbDelete, nil
	case r.Method == http.MethodDelete && req.res.Kind != namespaceKind && req.res.ClusterScoped == (req.namespace == ""):
		return verbDeleteCollection, nil
	}
	return "", methodNotAllowed()
}

// watchRequested reads the watch parameter the way the real server's
// parameter codec does: present, and neither "0" nor "false" in any case
// ("watch=yes", even "watch=", ask for a watch).
func watchRequested(values []string) bool {
	return len(values) > 0 && values[0] != "0" && !strings.EqualFold(values[0], "false")
}
