package kubeconfig

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/seed31a95821/informer/internal/testserver"
	"github.com/seed31a95821/informer/rest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inClusterDir writes a service-account directory as the kubelet mounts
// it (namespace "" = no namespace file) and returns its path.
func inClusterDir(t *testing.T, token, namespace string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "token"), []byte(token), 0o600))
	if namespace != "" {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "namespace"), []byte(namespace+"\n"), 0o600))
	}
	return dir
}

func TestInCluster(t *testing.T) {
	pki := testserver.NewPKI(t)
	dir := inClusterDir(t, "sa-token", "payments")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ca.crt"), pki.CAPEM, 0o600))
	vars := map[string]string{"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "6443"}

	l, err := InCluster{Dir: dir, Getenv: env(vars)}.Load()
	require.NoError(t, err)
	assert.Equal(t, "https://[fd00::1]:6443", l.Config.Host, "an IPv6 service address is bracketed")
	assert.Equal(t, filepath.Join(dir, "token"), l.Config.BearerTokenFile, "a file, so that rotation is picked up")
	assert.Equal(t, filepath.Join(dir, "ca.crt"), l.Config.CAFile)
	assert.Equal(t, "payments", l.Namespace)
	assert.True(t, l.InCluster)

	vars["POD_NAMESPACE"] = "from-env"
	l, err = InCluster{Dir: dir, Getenv: env(vars)}.Load()
	require.NoError(t, err)
	assert.Equal(t, "from-env", l.Namespace, "POD_NAMESPACE wins over the file, as in client-go")

	bare := inClusterDir(t, "tok", "")
	l, err = InCluster{Dir: bare, Getenv: env(vars)}.Load()
	require.NoError(t, err)
	assert.Empty(t, l.Config.CAFile, "no ca.crt: system roots")
	delete(vars, "POD_NAMESPACE")
	l, err = InCluster{Dir: bare, Getenv: env(vars)}.Load()
	require.NoError(t, err)
	assert.Equal(t, "default", l.Namespace)
}

func TestInClusterErrors(t *testing.T) {
	dir := inClusterDir(t, "tok", "ns")
	_, err := InCluster{Dir: dir, Getenv: env(map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1"})}.Load()
	assert.ErrorIs(t, err, ErrNotInCluster, "the port is missing")

	vars := env(map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"})
	_, err = InCluster{Dir: t.TempDir(), Getenv: vars}.Load()
	assert.ErrorIs(t, err, os.ErrNotExist, "no token file")

	_, err = InCluster{Dir: inClusterDir(t, "  \n", ""), Getenv: vars}.Load()
	assert.ErrorIs(t, err, rest.ErrInvalidConfig, "an empty token file")
}

// The service-account token is re-read as the kubelet rotates it: after
// the server refuses the old one, the authenticated client re-reads the
// file and retries once, and the caller sees only the success.
func TestInClusterTokenRotation(t *testing.T) {
	var mu sync.Mutex
	valid := "token-1"
	ts := tokenServer(t, &valid, &mu)
	u, err := url.Parse(ts.URL)
	require.NoError(t, err)
	dir := inClusterDir(t, "token-1", "ns")
	vars := env(map[string]string{"KUBERNETES_SERVICE_HOST": u.Hostname(), "KUBERNETES_SERVICE_PORT": u.Port()})
	l, err := InCluster{Dir: dir, Getenv: vars}.Load()
	require.NoError(t, err)
	cfg := l.Config
	cfg.Host = ts.URL // the test server speaks plain HTTP

	client, err := rest.NewAuthenticatedClient(cfg)
	require.NoError(t, err)
	defer client.CloseIdleConnections()
	get := func() int {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, ts.URL+"/api/v1/pods", nil)
		require.NoError(t, err)
		resp, err := client.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusOK, get())

	require.NoError(t, os.WriteFile(filepath.Join(dir, "token"), []byte("token-2"), 0o600))
	mu.Lock()
	valid = "token-2"
	mu.Unlock()
	assert.Equal(t, http.StatusOK, get(), "401, re-read, one retry")
	var auths []string
	for _, r := range ts.Requests() {
		auths = append(auths, r.Header.Get("Authorization"))
	}
	assert.Equal(t, []string{"Bearer token-1", "Bearer token-1", "Bearer token-2"}, auths)
}
