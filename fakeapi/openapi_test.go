package fakeapi

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOpenAPIDocuments(t *testing.T) {
	srv := startServer(t, Options{})
	code, body, header := do(t, http.MethodGet, srv.URL()+"/openapi/v2", "", "", "Accept", "application/json")
	require.Equal(t, http.StatusOK, code)
	var swagger struct {
		Definitions map[string]json.RawMessage `json:"definitions"`
	}
	require.NoError(t, json.Unmarshal(body, &swagger))
	require.Contains(t, swagger.Definitions, "io.k8s.api.apps.v1.Deployment")
	etag := header.Get("Etag")
	require.Len(t, etag, 2+128, "a quoted SHA-512")
	code, _, _ = do(t, http.MethodGet, srv.URL()+"/openapi/v2", "", "", "If-None-Match", etag)
	require.Equal(t, http.StatusNotModified, code)
	_, _, header = do(t, http.MethodGet, srv.URL()+"/openapi/v2", "", "", "Accept", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
	require.Equal(t, "application/com.github.proto-openapi.spec.v2.v1.0+protobuf", header.Get("Content-Type"))

	code, body, _ = do(t, http.MethodGet, srv.URL()+"/openapi/v3", "", "")
	require.Equal(t, http.StatusOK, code)
	var index struct {
		Paths map[string]struct{ ServerRelativeURL string } `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(body, &index))
	require.Len(t, index.Paths, 22, "the served group versions only: %s", body)
	_, _, header = do(t, http.MethodGet, srv.URL()+index.Paths["api/v1"].ServerRelativeURL, "", "")
	require.Equal(t, "public, immutable", header.Get("Cache-Control"))

	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(srv.URL() + "/openapi/v3/api/v1?hash=stale")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusMovedPermanently, resp.StatusCode)
	require.Equal(t, index.Paths["api/v1"].ServerRelativeURL, resp.Header.Get("Location"))
	code, _, _ = do(t, http.MethodGet, srv.URL()+"/openapi/v3/apis/flowcontrol.apiserver.k8s.io/v1beta3", "", "")
	require.Equal(t, http.StatusNotFound, code, "a group version the server does not serve has no document")
	// The views and the reviews have theirs (views.go, reviews.go).
	for gv, schema := range map[string]string{
		"apis/events.k8s.io/v1":         `"io.k8s.api.events.v1.Event"`,
		"apis/autoscaling/v1":           `"io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler"`,
		"apis/authorization.k8s.io/v1":  `"io.k8s.api.authorization.v1.SelfSubjectAccessReview"`,
		"apis/authentication.k8s.io/v1": `"io.k8s.api.authentication.v1.SelfSubjectReview"`,
	} {
		code, body, _ = do(t, http.MethodGet, srv.URL()+index.Paths[gv].ServerRelativeURL, "", "")
		require.Equal(t, http.StatusOK, code, gv)
		require.True(t, strings.Contains(string(body), schema), "%s describes %s", gv, schema)
	}

	// coordination.k8s.io/v1 is not recorded: its document is derived
	// from v2, with every reference resolvable.
	code, body, _ = do(t, http.MethodGet, srv.URL()+index.Paths["apis/coordination.k8s.io/v1"].ServerRelativeURL, "", "")
	require.Equal(t, http.StatusOK, code)
	var v3 struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(body, &v3))
	require.Contains(t, v3.Components.Schemas, "io.k8s.api.coordination.v1.Lease")
	require.Contains(t, v3.Components.Schemas, "io.k8s.api.coordination.v1.LeaseSpec")
	require.Contains(t, v3.Components.Schemas, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
	require.NotContains(t, string(body), "#/definitions/", "every reference points into components")
	for _, ref := range regexp.MustCompile(`"#/components/schemas/([^"]+)"`).FindAllStringSubmatch(string(body), -1) {
		require.Contains(t, v3.Components.Schemas, ref[1])
	}
}
