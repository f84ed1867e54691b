package fakeapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// patchServer serves one pod with two containers, web and sidecar.
func patchServer(t *testing.T) (*Server, string) {
	t.Helper()
	srv := startServer(t, Options{})
	createNamespace(t, srv, "ns")
	p := validPod("ns", "p", map[string]string{"app": "web"})
	p.Spec.Containers = []corev1.Container{{Name: "web", Image: "nginx:1"}, {Name: "sidecar", Image: "envoy:1"}}
	_, err := srv.Create(p)
	require.NoError(t, err)
	return srv, srv.URL() + "/api/v1/namespaces/ns/pods/p"
}

func TestStrategicMergePatchMergesListsByKey(t *testing.T) {
	_, url := patchServer(t)
	// What kubectl set image sends: one container, named; the other stays.
	code, body, _ := do(t, http.MethodPatch, url, mediaStrategicMerge,
		`{"spec":{"containers":[{"name":"web","image":"nginx:2"}]}}`)
	require.Equal(t, http.StatusOK, code, "%s", body)
	got := decodeJSON(t, body).(*corev1.Pod)
	require.Len(t, got.Spec.Containers, 2, "containers merge by name")
	require.Equal(t, "nginx:2", got.Spec.Containers[0].Image)
	require.Equal(t, "envoy:1", got.Spec.Containers[1].Image)

	// A merge patch of the same body replaces the list, which drops a
	// container: a pod update may not do that.
	code, body, _ = do(t, http.MethodPatch, url, mediaMerge, `{"spec":{"containers":[{"name":"web","image":"nginx:3"}]}}`)
	require.Equal(t, http.StatusUnprocessableEntity, code, "%s", body)
	require.Equal(t, "spec", decodeStatus(t, body).Details.Causes[0].Field)

	// $patch: delete removes one element by key.
	code, body, _ = do(t, http.MethodPatch, url, mediaStrategicMerge,
		`{"metadata":{"labels":{"app":null}},"spec":{"tolerations":[{"key":"a","operator":"Exists"}]}}`)
	require.Equal(t, http.StatusOK, code, "%s", body)
	require.Empty(t, decodeJSON(t, body).(*corev1.Pod).Labels)
}

func TestStrategicMergePatchErrors(t *testing.T) {
	_, url := patchServer(t)
	for _, tc := range []struct{ body string }{{`[1]`}, {`{"spec":`}, {`{"spec":{"containers":"x"}}`}} {
		code, body, _ := do(t, http.MethodPatch, url, mediaStrategicMerge, tc.body)
		require.Contains(t, []int{http.StatusBadRequest, http.StatusUnprocessableEntity}, code, "%s: %s", tc.body, body)
		decodeStatus(t, body)
	}
	// Invalid after the patch: 422 with the field cause, as for a PUT.
	code, body, _ := do(t, http.MethodPatch, url, mediaStrategicMerge, `{"spec":{"containers":[{"name":"web","image":""}]}}`)
	require.Equal(t, http.StatusUnprocessableEntity, code, "%s", body)
	require.Equal(t, "spec.containers[0].image", decodeStatus(t, body).Details.Causes[0].Field)
}

func TestJSONPatch(t *testing.T) {
	_, url := patchServer(t)
	code, body, _ := do(t, http.MethodPatch, url, mediaJSONPatch,
		`[{"op":"replace","path":"/spec/containers/1/image","value":"envoy:2"},{"op":"add","path":"/metadata/labels/tier","value":"front"}]`)
	require.Equal(t, http.StatusOK, code, "%s", body)
	got := decodeJSON(t, body).(*corev1.Pod)
	require.Equal(t, "envoy:2", got.Spec.Containers[1].Image)
	require.Equal(t, "front", got.Labels["tier"])

	// A failing test op: 422, nothing written.
	code, body, _ = do(t, http.MethodPatch, url, mediaJSONPatch, `[{"op":"test","path":"/metadata/name","value":"other"}]`)
	require.Equal(t, http.StatusUnprocessableEntity, code, "%s", body)
	// Not a list of operations: 400.
	code, _, _ = do(t, http.MethodPatch, url, mediaJSONPatch, `{"op":"add"}`)
	require.Equal(t, http.StatusBadRequest, code)
}

func TestHostilePatchesAreBounded(t *testing.T) {
	srv, url := patchServer(t)
	deep := strings.Repeat(`{"a":`, maxJSONDepth+1) + `1` + strings.Repeat(`}`, maxJSONDepth+1)
	for _, mt := range []string{mediaMerge, mediaStrategicMerge, mediaJSONPatch} {
		code, body, _ := do(t, http.MethodPatch, url, mt, deep)
		require.Equal(t, http.StatusBadRequest, code, "%s: %s", mt, body)
	}
	// Copies that double the labels each time outgrow the limit: 413.
	ops := []string{`{"op":"add","path":"/metadata/annotations","value":{"a":"` + strings.Repeat("x", 1<<12) + `"}}`}
	for i := 0; i < 40; i++ {
		ops = append(ops, `{"op":"copy","from":"/metadata/annotations","path":"/metadata/annotations/x`+strings.Repeat("y", i)+`"}`)
	}
	code, body, _ := do(t, http.MethodPatch, url, mediaJSONPatch, "["+strings.Join(ops, ",")+"]")
	require.Contains(t, []int{http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity}, code, "%s", body)
	// Far more copy operations than allowed (fakeapi/internal/patch allows 64): 413
	// before any work.
	many := make([]string, 1000)
	for i := range many {
		many[i] = `{"op":"copy","from":"/metadata/name","path":"/metadata/generateName"}`
	}
	code, _, _ = do(t, http.MethodPatch, url, mediaJSONPatch, "["+strings.Join(many, ",")+"]")
	require.Equal(t, http.StatusRequestEntityTooLarge, code)
	got, err := srv.Objects(corev1.SchemeGroupVersion.WithResource("pods"))
	require.NoError(t, err)
	require.Empty(t, got[0].(*corev1.Pod).Annotations, "no refused patch was written")
}
