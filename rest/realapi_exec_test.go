package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/integration/realapi"
	"github.com/seed31a95821/informer/kubeconfig"
	"github.com/seed31a95821/informer/reflector/wire"
	"github.com/seed31a95821/informer/rest"
)

// realAPIEnv opts in to the test against a real kube-apiserver, as in
// reflector/wire's tests (the same variable runs both).
const realAPIEnv = "WIRE_REALAPI"

// A real kube-apiserver reached through a kubeconfig whose user is an exec
// plugin (this test binary, see fake_exec_plugin_test.go). Its first run
// prints a token the server refuses: the 401 makes the next request run it
// again, and from then on it prints the cluster's token. The authenticated
// client then writes with the same cached credential.
func TestRealAPIServerThroughExecPlugin(t *testing.T) {
	if os.Getenv(realAPIEnv) == "" {
		t.Skipf("set %s=1 to run against a real kube-apiserver", realAPIEnv)
	}
	cluster := realapi.Start(t)
	ca, err := os.ReadFile(cluster.CAFile)
	require.NoError(t, err)
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	kc := map[string]any{
		"apiVersion": "v1", "kind": "Config", "current-context": "real",
		"clusters": []any{map[string]any{"name": "real", "cluster": map[string]any{"server": cluster.URL, "certificate-authority-data": ca}}},
		"contexts": []any{map[string]any{"name": "real", "context": map[string]any{"cluster": "real", "user": "plugin", "namespace": "exec-test"}}},
		"users": []any{map[string]any{"name": "plugin", "user": map[string]any{"exec": map[string]any{
			"apiVersion": rest.ExecAPIVersionV1, "command": os.Args[0], "interactiveMode": "Never", "provideClusterInfo": true,
			"env": []any{
				map[string]string{"name": "WIRE_TEST_FAKE_EXEC_PLUGIN", "value": "token"},
				map[string]string{"name": "FAKE_TOKEN", "value": cluster.Token},
				map[string]string{"name": "FAKE_WRONG_RUNS", "value": "1"},
				map[string]string{"name": "FAKE_RUNS", "value": runs},
			},
		}}}},
	}
	path := filepath.Join(dir, "kubeconfig.json") // JSON, which the loader reads as well as YAML
	raw, err := json.Marshal(kc)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, raw, 0o600))

	l, err := kubeconfig.LoadingRules{ExplicitPath: path, Getenv: func(string) string { return "" }}.Load()
	require.NoError(t, err)
	require.NotNil(t, l.Config.Exec)
	assert.Equal(t, "exec-test", l.Namespace)

	client, err := rest.NewAuthenticatedClient(l.Config)
	require.NoError(t, err)
	defer client.CloseIdleConnections()
	ns, err := json.Marshal(&corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: l.Namespace}})
	require.NoError(t, err)
	resp, err := client.Post(cluster.URL+"/api/v1/namespaces", "application/json", bytes.NewReader(ns))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode, "401 with the wrong token, plugin re-run, POST replayed")
	assert.Equal(t, 2, countRuns(t, runs))

	rc, err := rest.New(l.Config)
	require.NoError(t, err)
	lw, err := wire.New(rc, apiresource.Guess(corev1.SchemeGroupVersion.WithKind("Namespace")), wire.Options{})
	require.NoError(t, err)
	obj, err := lw.List(context.Background(), metav1.ListOptions{FieldSelector: "metadata.name=" + l.Namespace})
	require.NoError(t, err)
	require.Len(t, obj.(*corev1.NamespaceList).Items, 1)
	assert.Equal(t, 2, countRuns(t, runs), "the ListerWatcher uses the cached credential")
}

func countRuns(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return strings.Count(string(b), "\n")
}
