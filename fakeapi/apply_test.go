package fakeapi

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const applyDeployment = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":%d,` +
	`"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},` +
	`"spec":{"containers":[{"name":"c","image":"nginx:1"}]}}}}`

func TestServerSideApply(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	srv := startServer(t, Options{Now: func() time.Time { return now }})
	url := srv.URL() + "/apis/apps/v1/namespaces/default/deployments/d"
	apply := func(manager string, replicas int, query string) (int, []byte) {
		code, body, _ := do(t, http.MethodPatch, url+"?fieldManager="+manager+query, mediaApply,
			fmt.Sprintf(applyDeployment, replicas))
		return code, body
	}
	code, body := apply("alice", 2, "")
	require.Equal(t, http.StatusCreated, code, "apply creates: %s", body)
	d := decodeJSON(t, body).(*appsv1.Deployment)
	require.Equal(t, int32(2), *d.Spec.Replicas)
	require.Len(t, d.ManagedFields, 1)
	require.Equal(t, metav1.ManagedFieldsOperationApply, d.ManagedFields[0].Operation)
	require.Equal(t, now, d.ManagedFields[0].Time.Time.UTC(), "the server's clock")
	require.Contains(t, string(d.ManagedFields[0].FieldsV1.Raw), `"k:{\"name\":\"c\"}"`, "list items are owned by key")

	code, body = apply("alice", 2, "")
	require.Equal(t, http.StatusOK, code, "%s", body)
	require.Equal(t, d.ResourceVersion, decodeJSON(t, body).(*appsv1.Deployment).ResourceVersion, "the same apply is a no-op")

	code, body = apply("bob", 5, "")
	require.Equal(t, http.StatusConflict, code, "%s", body)
	st := decodeStatus(t, body)
	require.Equal(t, metav1.CauseTypeFieldManagerConflict, st.Details.Causes[0].Type)
	require.Equal(t, ".spec.replicas", st.Details.Causes[0].Field)

	code, body = apply("bob", 5, "&force=true")
	require.Equal(t, http.StatusOK, code, "%s", body)
	d = decodeJSON(t, body).(*appsv1.Deployment)
	require.Equal(t, int32(5), *d.Spec.Replicas)
	require.Len(t, d.ManagedFields, 2)

	code, _, _ = do(t, http.MethodPatch, url, mediaApply, fmt.Sprintf(applyDeployment, 1))
	require.Equal(t, http.StatusUnprocessableEntity, code, "a field manager is required")
	code, _, _ = do(t, http.MethodPatch, url+"?fieldManager=x", mediaApply, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"d"}}`)
	require.Equal(t, http.StatusBadRequest, code, "the kind must be the resource's")
	code, _, _ = do(t, http.MethodPatch, url+"?fieldManager=x", mediaApply, "a: [")
	require.Equal(t, http.StatusBadRequest, code)
}

// Apply to /status owns status fields only and keeps the spec; it never
// creates (a status needs its object).
func TestServerSideApplyStatus(t *testing.T) {
	srv := startServer(t, Options{})
	url := srv.URL() + "/apis/apps/v1/namespaces/default/deployments/d"
	status := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":9},"status":{"replicas":3}}`
	code, body, _ := do(t, http.MethodPatch, url+"/status?fieldManager=ctl", mediaApply, status)
	require.Equal(t, http.StatusNotFound, code, "no object, no status: %s", body)

	code, body, _ = do(t, http.MethodPatch, url+"?fieldManager=alice", mediaApply, fmt.Sprintf(applyDeployment, 2))
	require.Equal(t, http.StatusCreated, code, "%s", body)
	code, body, _ = do(t, http.MethodPatch, url+"/status?fieldManager=ctl", mediaApply, status)
	require.Equal(t, http.StatusOK, code, "%s", body)
	d := decodeJSON(t, body).(*appsv1.Deployment)
	require.Equal(t, int32(3), d.Status.Replicas)
	require.Equal(t, int32(2), *d.Spec.Replicas, "a status apply leaves the spec as it was")
	var managers []string
	for _, e := range d.ManagedFields {
		managers = append(managers, e.Manager+"/"+e.Subresource)
	}
	require.ElementsMatch(t, []string{"alice/", "ctl/status"}, managers)
}

// An apply patch with a field its type does not declare fails in the field
// manager, before any validation. kube-apiserver v1.37.2 answers it with
// this exact Status, a 500 without reason or details, for a create and an
// update alike and whatever fieldValidation says (docs/fakeapi.md).
func TestApplyUndeclaredField(t *testing.T) {
	srv := startServer(t, Options{})
	createNamespace(t, srv, "ns")
	url := srv.URL() + "/apis/apps/v1/namespaces/ns/deployments/d?fieldManager=m"
	bogus := strings.Replace(applyDeployment, `"replicas":%d,`, `"replicas":1,"bogus":true,`, 1)
	// The message names the patch as it was sent: without a namespace
	// here, with one below.
	namespaced := strings.Replace(bogus, `"name":"d"`, `"name":"d","namespace":"ns"`, 1)
	want := func(namespace string) string {
		return `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","code":500,"message":` +
			`"failed to create typed patch object (` + namespace + `/d; apps/v1, Kind=Deployment): .spec.bogus: field not declared in schema"}`
	}
	check := func(what, query string) {
		t.Helper()
		code, body, _ := do(t, http.MethodPatch, url+query, mediaApply, bogus)
		require.Equal(t, http.StatusInternalServerError, code, "%s: %s", what, body)
		require.JSONEq(t, want(""), string(body), what)
		code, body, _ = do(t, http.MethodPatch, url+query, mediaApply, namespaced)
		require.Equal(t, http.StatusInternalServerError, code, "%s: %s", what, body)
		require.JSONEq(t, want("ns"), string(body), what)
	}
	for _, v := range []string{"", "&fieldValidation=Strict", "&fieldValidation=Warn", "&fieldValidation=Ignore"} {
		check("create"+v, v)
	}
	code, body, _ := do(t, http.MethodPatch, url, mediaApply, fmt.Sprintf(applyDeployment, 1))
	require.Equal(t, http.StatusCreated, code, "%s", body)
	require.Equal(t, "ns", decodeJSON(t, body).(*appsv1.Deployment).Namespace, "the object has the URL's namespace")
	for _, v := range []string{"", "&fieldValidation=Strict", "&fieldValidation=Ignore"} {
		check("update"+v, v)
	}
}

// Every default kind can be applied, not only those of the group versions
// whose OpenAPI v3 documents are recorded (core v1, apps, apiextensions):
// the others get a schema deduced from the object, as custom types do.
func TestServerSideApplyKindWithoutRecordedSchema(t *testing.T) {
	srv := startServer(t, Options{})
	url := srv.URL() + "/apis/coordination.k8s.io/v1/namespaces/default/leases/l?fieldManager=alice"
	code, body, _ := do(t, http.MethodPatch, url, mediaApply,
		`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l"},"spec":{"holderIdentity":"a"}}`)
	require.Equal(t, http.StatusCreated, code, "%s", body)
	l := decodeJSON(t, body).(*coordinationv1.Lease)
	require.Equal(t, "a", *l.Spec.HolderIdentity)
	require.Len(t, l.ManagedFields, 1)
	require.Equal(t, metav1.ManagedFieldsOperationApply, l.ManagedFields[0].Operation)
	require.Contains(t, string(l.ManagedFields[0].FieldsV1.Raw), `"f:holderIdentity"`)

	code, body, _ = do(t, http.MethodPatch, strings.Replace(url, "alice", "bob", 1), mediaApply,
		`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l"},"spec":{"holderIdentity":"b"}}`)
	require.Equal(t, http.StatusConflict, code, "another manager's field: %s", body)
}
