package fakeapi

import (
	"fmt"
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

// A /scale write takes spec.replicas from every other manager, as on
// kube-apiserver, whose scale handler translates the owners between the
// workload and its Scale: the patcher that set the replicas before loses
// them (and its entry, which owned nothing else), the scaler's entry is
// the workload's, marked with its subresource, and a later apply of the
// replicas conflicts with the scaler only.
func TestScaleTakesReplicasFromOtherManagers(t *testing.T) {
	srv := startServer(t, Options{})
	createNamespace(t, srv, "ns")
	base := srv.URL() + "/apis/apps/v1/namespaces/ns/deployments"
	code, body, _ := do(t, http.MethodPost, base+"?fieldManager=creator", mediaJSON, fmt.Sprintf(applyDeployment, 2))
	require.Equal(t, http.StatusCreated, code, "%s", body)
	code, body, _ = do(t, http.MethodPatch, base+"/d?fieldManager=patcher", mediaMerge, `{"spec":{"replicas":3}}`)
	require.Equal(t, http.StatusOK, code, "%s", body)
	code, body, _ = do(t, http.MethodPatch, base+"/d/scale?fieldManager=scaler", mediaMerge, `{"spec":{"replicas":5}}`)
	require.Equal(t, http.StatusOK, code, "%s", body)

	code, body, _ = do(t, http.MethodGet, base+"/d", "", "")
	require.Equal(t, http.StatusOK, code, "%s", body)
	d := decodeJSON(t, body).(*appsv1.Deployment)
	owners := map[string]string{}
	for _, e := range d.ManagedFields {
		owners[e.Manager+"/"+e.Subresource] = string(e.FieldsV1.Raw)
	}
	require.NotContains(t, owners, "patcher/", "the patcher owned only the replicas, which the scaler took")
	require.NotContains(t, owners["creator/"], "f:replicas")
	require.JSONEq(t, `{"f:spec":{"f:replicas":{}}}`, owners["scaler/scale"])
	for _, e := range d.ManagedFields {
		if e.Subresource == "scale" {
			require.Equal(t, "apps/v1", e.APIVersion, "the entry is the workload's")
			require.Nil(t, e.Time, "kube-apiserver's scale handler keeps no time for it")
		}
	}

	// Scaling to the same count again changes nothing.
	code, body, _ = do(t, http.MethodPatch, base+"/d/scale?fieldManager=other", mediaMerge, `{"spec":{"replicas":5}}`)
	require.Equal(t, http.StatusOK, code, "%s", body)
	require.Equal(t, d.ResourceVersion, decodeScale(t, body).ResourceVersion)

	code, body, _ = do(t, http.MethodPatch, base+"/d?fieldManager=applier", mediaApply, fmt.Sprintf(applyDeployment, 2))
	require.Equal(t, http.StatusConflict, code, "%s", body)
	st := decodeStatus(t, body)
	require.Len(t, st.Details.Causes, 1, "%s", body)
	require.Equal(t, ".spec.replicas", st.Details.Causes[0].Field)
	require.Contains(t, st.Details.Causes[0].Message, `conflict with "scaler" with subresource "scale"`)
}
