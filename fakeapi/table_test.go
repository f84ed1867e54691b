package fakeapi

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

func TestTablePods(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := start
	srv := startServer(t, Options{Now: func() time.Time { return now }})
	running := validPod("default", "web", nil)
	running.Spec.NodeName = "node-1"
	running.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.1.2.3", ContainerStatuses: []corev1.ContainerStatus{
		{Name: "c", Ready: true, RestartCount: 2, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}
	_, err := srv.Create(running)
	require.NoError(t, err)
	crashing := validPod("default", "crash", nil)
	crashing.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{
		Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}
	_, err = srv.Create(crashing)
	require.NoError(t, err)
	now = start.Add(90 * time.Second)

	code, body, _ := do(t, http.MethodGet, srv.URL()+"/api/v1/namespaces/default/pods", "", "", "Accept", tableAccept)
	require.Equal(t, http.StatusOK, code, "%s", body)
	var table metav1.Table
	require.NoError(t, json.Unmarshal(body, &table))
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	require.Equal(t, []string{"Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node", "Readiness Gates"}, names)
	require.Equal(t, []any{"crash", "0/1", "CrashLoopBackOff", "0", "90s", "<none>", "<none>", "<none>", "<none>"}, table.Rows[0].Cells)
	require.Equal(t, []any{"web", "1/1", "Running", "2", "90s", "10.1.2.3", "node-1", "<none>", "<none>"}, table.Rows[1].Cells)
	var object metav1.PartialObjectMetadata
	require.NoError(t, json.Unmarshal(table.Rows[0].Object.Raw, &object))
	require.Equal(t, "PartialObjectMetadata", object.Kind, "rows carry the metadata by default")

	code, body, _ = do(t, http.MethodGet, srv.URL()+"/api/v1/namespaces/default/pods/web?includeObject=None", "", "", "Accept", tableAccept)
	require.Equal(t, http.StatusOK, code, "%s", body)
	table = metav1.Table{}
	require.NoError(t, json.Unmarshal(body, &table))
	require.Len(t, table.Rows, 1)
	require.Nil(t, table.Rows[0].Object.Raw)
	code, _, _ = do(t, http.MethodGet, srv.URL()+"/api/v1/pods?includeObject=All", "", "", "Accept", tableAccept)
	require.Equal(t, http.StatusBadRequest, code)
}

func TestTableOtherKinds(t *testing.T) {
	srv := startServer(t, Options{})
	base := srv.URL()
	for _, tc := range []struct {
		path, body string
		cells      []any
	}{
		{"/apis/apps/v1/namespaces/default/deployments", `{"metadata":{"name":"d"},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"d"}},` +
			`"template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"c","image":"nginx:1"}]}}}}`,
			[]any{"d", "0/3", 0.0, 0.0, "0s", "c", "nginx:1", "app=d"}},
		{"/api/v1/namespaces/default/services", `{"metadata":{"name":"s"},"spec":{"clusterIP":"10.0.0.9","selector":{"app":"d"},"ports":[{"port":80}]}}`,
			[]any{"s", "ClusterIP", "10.0.0.9", "<none>", "80/TCP", "0s", "app=d"}},
		{"/api/v1/namespaces", `{"metadata":{"name":"team"}}`, []any{"team", "Active", "0s"}},
	} {
		code, body, _ := do(t, http.MethodPost, base+tc.path, mediaJSON, tc.body)
		require.Equal(t, http.StatusCreated, code, "%s", body)
		code, body, _ = do(t, http.MethodGet, base+tc.path, "", "", "Accept", tableAccept)
		require.Equal(t, http.StatusOK, code, "%s", body)
		var table metav1.Table
		require.NoError(t, json.Unmarshal(body, &table))
		var found bool
		for _, row := range table.Rows {
			if row.Cells[0] == tc.cells[0] {
				require.Equal(t, tc.cells, row.Cells, tc.path)
				found = true
			}
		}
		require.True(t, found, "%s: %s", tc.path, body)
	}
}
