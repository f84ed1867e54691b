package openapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func get(t *testing.T, d *Documents, target string, header http.Header) (*httptest.ResponseRecorder, bool) {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, target, nil)
	for k, v := range header {
		r.Header[k] = v
	}
	w := httptest.NewRecorder()
	found := d.Serve(w, r)
	return w, found
}

// The documents are served as the real server serves them: an index with
// hashed URLs, immutable at the current hash, redirected from a stale
// one, and 304 for a matching ETag; a group version with no recorded v3
// document gets a derived one.
func TestServe(t *testing.T) {
	var d Documents
	require.NoError(t, d.Load([]schema.GroupVersion{{Version: "v1"}, {Group: "coordination.k8s.io", Version: "v1"}}))

	w, found := get(t, &d, "/openapi/v3", nil)
	require.True(t, found)
	var index struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &index))
	require.Contains(t, index.Paths, "api/v1")
	require.Contains(t, index.Paths, "apis/coordination.k8s.io/v1", "derived from v2")

	w, _ = get(t, &d, index.Paths["api/v1"].ServerRelativeURL, nil)
	require.Equal(t, http.StatusOK, w.Code)
	require.Equal(t, "public, immutable", w.Header().Get("Cache-Control"))
	etag := w.Header().Get("Etag")

	w, _ = get(t, &d, "/openapi/v3/api/v1", http.Header{"If-None-Match": {etag}})
	require.Equal(t, http.StatusNotModified, w.Code)

	w, _ = get(t, &d, "/openapi/v3/api/v1?hash=stale", nil)
	require.Equal(t, http.StatusMovedPermanently, w.Code)

	w, _ = get(t, &d, "/openapi/v2", http.Header{"Accept": {"application/com.github.proto-openapi.spec.v2@v1.0+protobuf"}})
	require.Equal(t, mediaOpenAPIV2Protobuf, w.Header().Get("Content-Type"))

	_, found = get(t, &d, "/openapi/v3/apis/nothing/v1", nil)
	require.False(t, found)
}

// A derived document names the kind of every path kubectl looks up: the
// patch of an object, and the post of a create-only review, which has no
// patch (kubectl explain selfsubjectaccessreviews).
func TestDerivedPathsNameTheirKinds(t *testing.T) {
	var d Documents
	require.NoError(t, d.Load([]schema.GroupVersion{{Group: "authorization.k8s.io", Version: "v1"}}))
	w, found := get(t, &d, "/openapi/v3/apis/authorization.k8s.io/v1", nil)
	require.True(t, found)
	var doc struct {
		Paths map[string]map[string]struct {
			GVK map[string]string `json:"x-kubernetes-group-version-kind"`
		} `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &doc))
	post := doc.Paths["/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"]["post"]
	require.Equal(t, map[string]string{"group": "authorization.k8s.io", "version": "v1", "kind": "SelfSubjectAccessReview"}, post.GVK)
}

// Custom resources' documents come and go with SetCRD.
func TestSetCRD(t *testing.T) {
	var d Documents
	require.NoError(t, d.Load(nil))
	d.SetCRD("apis/example.com/v1", NewDoc([]byte(`{}`)), true)
	w, found := get(t, &d, "/openapi/v3/apis/example.com/v1", nil)
	require.True(t, found)
	require.Equal(t, "{}", w.Body.String())
	d.SetCRD("apis/example.com/v1", Doc{}, false)
	_, found = get(t, &d, "/openapi/v3/apis/example.com/v1", nil)
	require.False(t, found)
}
