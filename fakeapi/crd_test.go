package fakeapi

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const widgetCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"widgets.example.com"},
"spec":{"group":"example.com","scope":"Namespaced",
 "names":{"plural":"widgets","singular":"widget","kind":"Widget","shortNames":["wd"]},
 "versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}},
  "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}},
  "additionalPrinterColumns":[{"name":"Size","type":"integer","jsonPath":".spec.size"},
   {"name":"Phase","type":"string","jsonPath":".status.phase"},
   {"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}]}]}}`

func TestCRDRoundTrip(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	srv := startServer(t, Options{Now: func() time.Time { return now }})
	base := srv.URL()
	widgets := base + "/apis/example.com/v1/namespaces/default/widgets"
	code, _, _ := do(t, http.MethodGet, widgets, "", "")
	require.Equal(t, http.StatusNotFound, code, "not served before its CRD")

	code, body, _ := do(t, http.MethodPost, base+"/apis/apiextensions.k8s.io/v1/customresourcedefinitions", mediaJSON, widgetCRD)
	require.Equal(t, http.StatusCreated, code, "%s", body)
	var crd unstructured.Unstructured
	require.NoError(t, json.Unmarshal(body, &crd))
	_, found, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	require.False(t, found, "the create's answer is not established yet")
	code, body, _ = do(t, http.MethodGet, base+"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com", "", "")
	require.Equal(t, http.StatusOK, code)
	require.NoError(t, json.Unmarshal(body, &crd))
	conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	require.Len(t, conditions, 2, "then accepted and established")

	code, body0, _ := do(t, http.MethodPost, widgets, mediaJSON,
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"size":3},"status":{"phase":"ignored"}}`)
	require.Equal(t, http.StatusCreated, code, "%s", body0)
	// The status subresource: status is written through /status only.
	code, body, _ = do(t, http.MethodPut, widgets+"/w1/status", mediaJSON,
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"size":99},"status":{"phase":"Ready"}}`)
	require.Equal(t, http.StatusUnprocessableEntity, code, "custom resources take no unconditional update: %s", body)
	code, body, _ = do(t, http.MethodPut, widgets+"/w1/status", mediaJSON,
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1","resourceVersion":"`+rvOfBody(t, body0)+`"},"spec":{"size":99},"status":{"phase":"Ready"}}`)
	require.Equal(t, http.StatusOK, code, "%s", body)
	var w unstructured.Unstructured
	require.NoError(t, json.Unmarshal(body, &w))
	size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size")
	require.Equal(t, int64(3), size, "a /status write keeps the spec")
	require.Equal(t, int64(1), w.GetGeneration())

	code, body, _ = do(t, http.MethodPatch, widgets+"/w1", mediaMerge, `{"spec":{"size":4}}`)
	require.Equal(t, http.StatusOK, code, "%s", body)
	require.NoError(t, json.Unmarshal(body, &w))
	require.Equal(t, int64(2), w.GetGeneration(), "a spec change bumps the generation")
	code, _, _ = do(t, http.MethodPatch, widgets+"/w1", mediaStrategicMerge, `{"spec":{"size":5}}`)
	require.Equal(t, http.StatusUnsupportedMediaType, code, "no strategic merge for custom resources")
	code, body, _ = do(t, http.MethodPatch, widgets+"/w2?fieldManager=me", mediaApply,
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w2"},"spec":{"size":1}}`)
	require.Equal(t, http.StatusCreated, code, "server-side apply: %s", body)

	now = now.Add(time.Minute)
	code, body, _ = do(t, http.MethodGet, widgets, "", "", "Accept", tableAccept)
	require.Equal(t, http.StatusOK, code, "%s", body)
	var table metav1.Table
	require.NoError(t, json.Unmarshal(body, &table))
	require.Equal(t, "Size", table.ColumnDefinitions[1].Name)
	require.Equal(t, []any{"w1", 4.0, "Ready", "60s"}, table.Rows[0].Cells)
	require.Equal(t, []any{"w2", 1.0, nil, "60s"}, table.Rows[1].Cells)

	code, body, _ = do(t, http.MethodGet, widgets, "", "")
	require.Equal(t, http.StatusOK, code)
	var list unstructured.UnstructuredList
	require.NoError(t, json.Unmarshal(body, &list))
	require.Equal(t, "WidgetList", list.GetKind())
	require.Len(t, list.Items, 2)
	require.Equal(t, "Widget", list.Items[0].GetKind(), "custom resources keep their kind in lists")

	code, body, _ = do(t, http.MethodGet, base+"/openapi/v3/apis/example.com/v1", "", "")
	require.Equal(t, http.StatusOK, code, "the schema is published")
	var doc struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(body, &doc))
	require.Contains(t, doc.Components.Schemas, "com.example.v1.Widget")
	require.Contains(t, doc.Components.Schemas, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")

	code, _, _ = do(t, http.MethodDelete, base+"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com", "", "")
	require.Equal(t, http.StatusOK, code)
	code, _, _ = do(t, http.MethodGet, widgets, "", "")
	require.Equal(t, http.StatusNotFound, code, "not served after its CRD is deleted")
	code, _, _ = do(t, http.MethodGet, base+"/openapi/v3/apis/example.com/v1", "", "")
	require.Equal(t, http.StatusNotFound, code, "nor published")
	_, err := srv.Objects(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"})
	require.ErrorIs(t, err, ErrNotServed)
}

func TestCRDValidation(t *testing.T) {
	srv := startServer(t, Options{})
	code, body, _ := do(t, http.MethodPost, srv.URL()+"/apis/apiextensions.k8s.io/v1/customresourcedefinitions", mediaJSON,
		`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"wrong"},
		"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"widgets","kind":"Widget"},
		"versions":[{"name":"v1","served":true,"storage":true}]}}`)
	require.Equal(t, http.StatusUnprocessableEntity, code, "%s", body)
	require.Equal(t, "metadata.name", decodeStatus(t, body).Details.Causes[0].Field)
}

func rvOfBody(t *testing.T, body []byte) string {
	t.Helper()
	var u unstructured.Unstructured
	require.NoError(t, json.Unmarshal(body, &u))
	return u.GetResourceVersion()
}
