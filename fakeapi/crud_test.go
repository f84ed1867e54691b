package fakeapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

const podJSON = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`

func TestHTTPCreateGetUpdateDelete(t *testing.T) {
	srv := startServer(t, Options{})
	base := srv.URL() + "/api/v1/namespaces/default/pods"

	code, body, _ := do(t, http.MethodPost, base, mediaJSON, podJSON)
	require.Equal(t, http.StatusCreated, code, "%s", body)
	created := decodeJSON(t, body).(*corev1.Pod)
	require.Equal(t, "default", created.Namespace, "namespace comes from the URL")
	// RV 1 is the namespace "default", created on first use.
	require.Equal(t, "2", created.ResourceVersion)
	require.NotEmpty(t, created.UID)

	code, body, _ = do(t, http.MethodPost, base, mediaJSON, podJSON)
	require.Equal(t, http.StatusConflict, code)
	require.Equal(t, metav1.StatusReasonAlreadyExists, decodeStatus(t, body).Reason)

	code, body, _ = do(t, http.MethodGet, base+"/web", "", "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "web", decodeJSON(t, body).(*corev1.Pod).Name)

	stale := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","resourceVersion":"42"}}`
	code, body, _ = do(t, http.MethodPut, base+"/web", mediaJSON, stale)
	require.Equal(t, http.StatusConflict, code)
	st := decodeStatus(t, body)
	require.Equal(t, metav1.StatusReasonConflict, st.Reason)
	require.Contains(t, st.Message, "the object has been modified")

	changed := created.DeepCopy()
	changed.Labels = map[string]string{"app": "v2"}
	changed.Status.Phase = corev1.PodRunning
	code, body, _ = do(t, http.MethodPut, base+"/web", mediaJSON, jsonBody(t, changed))
	require.Equal(t, http.StatusOK, code, "%s", body)
	updated := decodeJSON(t, body).(*corev1.Pod)
	require.Equal(t, "v2", updated.Labels["app"])
	require.Equal(t, "3", updated.ResourceVersion)
	require.Equal(t, corev1.PodPending, updated.Status.Phase, "a PUT on the object keeps the stored status")

	status := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","labels":{"app":"v3"}},` +
		`"spec":{"nodeName":"elsewhere"},"status":{"phase":"Running"}}`
	code, body, _ = do(t, http.MethodPut, base+"/web/status", mediaJSON, status)
	require.Equal(t, http.StatusOK, code, "%s", body)
	written := decodeJSON(t, body).(*corev1.Pod)
	require.Equal(t, corev1.PodRunning, written.Status.Phase)
	require.Empty(t, written.Spec.NodeName, "a /status write cannot change the spec")
	require.Equal(t, "v3", written.Labels["app"], "as on kube-apiserver, a pod's /status write carries its metadata")

	code, body, _ = do(t, http.MethodDelete, base+"/web", mediaJSON, `{"preconditions":{"resourceVersion":"1"}}`)
	require.Equal(t, http.StatusConflict, code, "%s", body)
	st = decodeStatus(t, body)
	require.Equal(t, "Pod", st.Details.Kind, "a failed delete precondition names the kind, as kube-apiserver does")
	require.Equal(t, `Operation cannot be fulfilled on Pod "web": the ResourceVersion in the precondition (1) `+
		`does not match the ResourceVersion in record (4). The object might have been modified`, st.Message)
	code, body, _ = do(t, http.MethodDelete, base+"/web", mediaJSON, `{"preconditions":{"uid":"other"}}`)
	require.Equal(t, http.StatusConflict, code, "%s", body)
	require.Contains(t, decodeStatus(t, body).Message, "the UID in the precondition (other) does not match")
	code, _, _ = do(t, http.MethodDelete, base+"/web", "", "")
	require.Equal(t, http.StatusOK, code)
	code, body, _ = do(t, http.MethodGet, base+"/web", "", "")
	require.Equal(t, http.StatusNotFound, code)
	st = decodeStatus(t, body)
	require.Equal(t, metav1.StatusReasonNotFound, st.Reason)
	require.Equal(t, `pods "web" not found`, st.Message)
}

func TestHTTPMergePatch(t *testing.T) {
	srv := startServer(t, Options{})
	createNamespace(t, srv, "ns")
	_, err := srv.Create(validPod("ns", "p", map[string]string{"keep": "1", "drop": "1"}))
	require.NoError(t, err)
	url := srv.URL() + "/api/v1/namespaces/ns/pods/p"

	code, body, _ := do(t, http.MethodPatch, url, mediaMerge, `{"metadata":{"labels":{"drop":null,"new":"2"}}}`)
	require.Equal(t, http.StatusOK, code, "%s", body)
	p := decodeJSON(t, body).(*corev1.Pod)
	require.Equal(t, map[string]string{"keep": "1", "new": "2"}, p.Labels)
	require.Equal(t, "3", p.ResourceVersion, "RVs 1 and 2 are the namespace and the pod")

	code, body, _ = do(t, http.MethodPatch, url, mediaMerge, `{"metadata":{"resourceVersion":"1","labels":{"x":"y"}}}`)
	require.Equal(t, http.StatusConflict, code, "a resourceVersion in the patch is a precondition: %s", body)

	code, _, _ = do(t, http.MethodPatch, url, "application/x-unknown-patch", `{}`)
	require.Equal(t, http.StatusUnsupportedMediaType, code)
	code, _, _ = do(t, http.MethodPatch, url, mediaMerge, `[1,2]`)
	require.Equal(t, http.StatusBadRequest, code)
	code, _, _ = do(t, http.MethodPatch, url+"x", mediaMerge, `{}`)
	require.Equal(t, http.StatusNotFound, code)
}

func TestHTTPErrorsAreStatuses(t *testing.T) {
	srv := startServer(t, Options{})
	createNamespace(t, srv, "ns")
	base := srv.URL()
	cases := []struct {
		name, method, path, contentType, body string
		code                                  int
		reason                                metav1.StatusReason
	}{
		{"invalid name", "POST", "/api/v1/namespaces/ns/pods", mediaJSON, `{"metadata":{"name":"Bad_Name"}}`, 422, metav1.StatusReasonInvalid},
		{"bad json", "POST", "/api/v1/namespaces/ns/pods", mediaJSON, `{"metadata":`, 400, metav1.StatusReasonBadRequest},
		{"wrong kind", "POST", "/api/v1/namespaces/ns/pods", mediaJSON, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"a"}}`, 400, metav1.StatusReasonBadRequest},
		{"namespace mismatch", "POST", "/api/v1/namespaces/ns/pods", mediaJSON, `{"metadata":{"name":"a","namespace":"other"}}`, 400, metav1.StatusReasonBadRequest},
		{"name mismatch", "PUT", "/api/v1/namespaces/ns/pods/a", mediaJSON, `{"metadata":{"name":"b"}}`, 400, metav1.StatusReasonBadRequest},
		{"unknown content type", "POST", "/api/v1/namespaces/ns/pods", "text/plain", `x`, 415, metav1.StatusReasonUnsupportedMediaType},
		{"unknown resource", "GET", "/api/v1/widgets", "", "", 404, metav1.StatusReasonNotFound},
		{"unknown version of a known group", "GET", "/apis/apps/v2/things", "", "", 404, metav1.StatusReasonNotFound},
		{"namespaced object without namespace", "GET", "/api/v1/pods/a", "", "", 404, metav1.StatusReasonNotFound},
		{"cluster object under namespace", "GET", "/api/v1/namespaces/ns/nodes", "", "", 404, metav1.StatusReasonNotFound},
		{"create on all namespaces", "POST", "/api/v1/pods", mediaJSON, `{}`, 405, metav1.StatusReasonMethodNotAllowed},
		{"bad label selector", "GET", "/api/v1/pods?labelSelector=a%3D%3D%3Db", "", "", 400, metav1.StatusReasonBadRequest},
		{"unsupported field", "GET", "/api/v1/services?fieldSelector=spec.nodeName%3Dx", "", "", 400, metav1.StatusReasonBadRequest},
		{"bad resourceVersion", "GET", "/api/v1/pods?resourceVersion=abc", "", "", 400, metav1.StatusReasonBadRequest},
		{"match without rv", "GET", "/api/v1/pods?resourceVersionMatch=Exact", "", "", 422, metav1.StatusReasonInvalid},
		{"initial events on list", "GET", "/api/v1/pods?sendInitialEvents=true", "", "", 422, metav1.StatusReasonInvalid},
		{"bad continue", "GET", "/api/v1/pods?continue=not-a-token!", "", "", 400, metav1.StatusReasonBadRequest},
		{"continue with rv", "GET", "/api/v1/pods?continue=abc&resourceVersion=1", "", "", 400, metav1.StatusReasonBadRequest},
		{"unknown subresource", "GET", "/api/v1/namespaces/ns/pods/a/exec", "", "", 404, metav1.StatusReasonNotFound},
	}
	for _, path := range []string{"/apis/nope/v1/things", "/apis/nope", "/nope"} {
		code, body, header := do(t, http.MethodGet, base+path, "", "")
		require.Equal(t, http.StatusNotFound, code)
		require.Equal(t, "404 page not found\n", string(body), "outside every group: the real mux's plain text")
		require.Equal(t, "text/plain; charset=utf-8", header.Get("Content-Type"))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body, _ := do(t, tc.method, base+tc.path, tc.contentType, tc.body)
			require.Equal(t, tc.code, code, "%s", body)
			st := decodeStatus(t, body)
			require.Equal(t, tc.reason, st.Reason, "%s", body)
			require.Equal(t, int32(tc.code), st.Code)
			require.Equal(t, metav1.StatusFailure, st.Status)
		})
	}
}

func TestGoAPIReturnsCopies(t *testing.T) {
	srv := startServer(t, Options{})
	in := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}
	out, err := srv.Create(in)
	require.NoError(t, err)
	require.Empty(t, in.ResourceVersion, "the caller's object is not modified")
	out.(*corev1.Pod).Labels = map[string]string{"mutated": "yes"}
	objs, err := srv.Objects(corev1.SchemeGroupVersion.WithResource("pods"))
	require.NoError(t, err)
	require.Len(t, objs, 1)
	require.Empty(t, objs[0].(*corev1.Pod).Labels, "mutating a returned object does not touch the store")

	_, err = srv.Create(&metav1.Status{})
	require.ErrorIs(t, err, ErrNotServed)
	require.NoError(t, srv.Delete(in))
	require.Equal(t, uint64(2), srv.ResourceVersion())
	writes := srv.Writes()
	require.Len(t, writes, 2)
	require.Equal(t, "ADDED", string(writes[0].Type))
	require.Equal(t, "DELETED", string(writes[1].Type))
	require.Equal(t, "a", writes[1].Name)
}

// A PUT that changes nothing is no write, as on kube-apiserver: the answer
// keeps the resourceVersion, nothing is recorded and no watch hears of it.
// That holds for the object as the server sent it and for the manifest it
// was created from: the server puts back what it assigned (a pod's
// priority, a Service's cluster IP) before comparing.
func TestNoOpUpdateKeepsResourceVersion(t *testing.T) {
	srv := startServer(t, Options{})
	createNamespace(t, srv, "ns")
	base := srv.URL() + "/api/v1/namespaces/ns/"
	cases := []struct{ resource, name, manifest string }{
		{"pods", "p", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]}}`},
		{"services", "s", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"ports":[{"port":80}]}}`},
		{"services", "headless", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"headless"},"spec":{"clusterIP":"None","ports":[{"port":80}]}}`},
		{"configmaps", "c", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"b"}}`},
	}
	for _, tc := range cases {
		t.Run(tc.resource+"/"+tc.name, func(t *testing.T) {
			code, created, _ := do(t, http.MethodPost, base+tc.resource, mediaJSON, tc.manifest)
			require.Equal(t, http.StatusCreated, code, "%s", created)
			rv := decodeJSON(t, created).(metav1.Object).GetResourceVersion()
			w := openWatch(t, base+tc.resource+"?watch=true&resourceVersion="+rv, mediaJSON)
			writes := len(srv.Writes())

			withRV := strings.Replace(tc.manifest, `"metadata":{`, `"metadata":{"resourceVersion":"`+rv+`",`, 1)
			for what, body := range map[string]string{"as sent": string(created), "manifest": withRV} {
				code, got, _ := do(t, http.MethodPut, base+tc.resource+"/"+tc.name, mediaJSON, body)
				require.Equal(t, http.StatusOK, code, "%s: %s", what, got)
				require.JSONEq(t, string(created), string(got), "%s: the answer is the stored object", what)
			}
			require.Equal(t, rv, formatRV(srv.ResourceVersion()))
			require.Len(t, srv.Writes(), writes, "a no-op update is not a write")

			// The first event the watch sees is the next real write.
			changed := decodeJSON(t, created).(runtime.Object)
			changed.(metav1.Object).SetLabels(map[string]string{"changed": "yes"})
			_, err := srv.Update(changed)
			require.NoError(t, err)
			require.Equal(t, "MODIFIED "+tc.name+" "+formatRV(srv.ResourceVersion()), eventSummary(nextEvent(t, w)))
		})
	}
}
