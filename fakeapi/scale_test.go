package fakeapi

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestScaleSubresource(t *testing.T) {
	srv := startServer(t, Options{})
	base := srv.URL() + "/apis/apps/v1/namespaces/default/deployments"
	code, body, _ := do(t, http.MethodPost, base, mediaJSON, `{"metadata":{"name":"d"},"spec":{"replicas":2,`+
		`"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},`+
		`"spec":{"containers":[{"name":"c","image":"nginx:1"}]}}}}`)
	require.Equal(t, http.StatusCreated, code, "%s", body)

	code, body, _ = do(t, http.MethodGet, base+"/d/scale", "", "")
	require.Equal(t, http.StatusOK, code, "%s", body)
	scale := decodeScale(t, body)
	require.Equal(t, int32(2), scale.Spec.Replicas)
	require.Equal(t, "app=d", scale.Status.Selector)

	// kubectl scale sends a merge patch of the Scale.
	code, body, _ = do(t, http.MethodPatch, base+"/d/scale", mediaMerge, `{"spec":{"replicas":5}}`)
	require.Equal(t, http.StatusOK, code, "%s", body)
	require.Equal(t, int32(5), decodeScale(t, body).Spec.Replicas)
	objs, err := srv.Objects(appsv1.SchemeGroupVersion.WithResource("deployments"))
	require.NoError(t, err)
	d := objs[0].(*appsv1.Deployment)
	require.Equal(t, int32(5), *d.Spec.Replicas)
	require.Equal(t, int64(2), d.Generation, "a scale changes the spec")

	// A PUT with a stale resourceVersion conflicts; a negative count is invalid.
	code, _, _ = do(t, http.MethodPut, base+"/d/scale", mediaJSON,
		`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"d","resourceVersion":"1"},"spec":{"replicas":1}}`)
	require.Equal(t, http.StatusConflict, code)
	code, _, _ = do(t, http.MethodPut, base+"/d/scale", mediaJSON,
		`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"d"},"spec":{"replicas":-1}}`)
	require.Equal(t, http.StatusUnprocessableEntity, code)
	// DaemonSets have no scale.
	code, _, _ = do(t, http.MethodGet, srv.URL()+"/apis/apps/v1/namespaces/default/daemonsets/x/scale", "", "")
	require.Equal(t, http.StatusNotFound, code)
}

func decodeScale(t *testing.T, body []byte) *autoscalingv1.Scale {
	t.Helper()
	obj, err := runtime.Decode(testCodecs.UniversalDeserializer(), body)
	require.NoError(t, err)
	return obj.(*autoscalingv1.Scale)
}
