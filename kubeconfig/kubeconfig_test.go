package kubeconfig

import (
	"crypto/tls"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed31a95821/informer/internal/testserver"
	"github.com/seed31a95821/informer/rest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeKubeconfig(t *testing.T, dir, content string) string {
	t.Helper()
	path := filepath.Join(dir, "config")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func TestLoadKubeconfigDataFields(t *testing.T) {
	pki := testserver.NewPKI(t)
	srv, clientCN := testserver.NewTLS(t, pki, tls.RequireAndVerifyClientCert)
	path := writeKubeconfig(t, t.TempDir(), `
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster:
    server: `+srv.URL+`
    certificate-authority-data: `+b64(pki.CAPEM)+`
users:
- name: alice
  user:
    client-certificate-data: `+b64(pki.ClientCert)+`
    client-key-data: `+b64(pki.ClientKey)+`
contexts:
- name: dev
  context:
    cluster: dev-cluster
    user: alice
    namespace: ignored
preferences: {}
`)
	cfg, err := LoadKubeconfig(path)
	require.NoError(t, err)
	assert.Equal(t, srv.URL, cfg.Host)
	assert.Equal(t, pki.CAPEM, cfg.CAData)
	assert.Equal(t, pki.ClientCert, cfg.CertData)

	// The loaded rest.Config reaches the mutual-TLS server as alice.
	require.NoError(t, listOnce(t, cfg))
	assert.Equal(t, "alice", clientCN())
}

func TestLoadKubeconfigRelativeFilePaths(t *testing.T) {
	pki := testserver.NewPKI(t)
	dir := t.TempDir()
	pki.WriteFiles(t, filepath.Join(dir, "certs"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "certs", "token"), []byte("tok\n"), 0o600))
	path := writeKubeconfig(t, dir, `
current-context: ctx-files
clusters:
- name: c
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority: certs/ca.crt
    tls-server-name: kubernetes.default
users:
- name: u
  user:
    client-certificate: certs/client.crt
    client-key: `+filepath.Join(dir, "certs", "client.key")+`
    tokenFile: certs/token
    token: static-token-loses-to-tokenFile
contexts:
- name: ctx-files
  context: {cluster: c, user: u}
`)
	cfg, err := LoadKubeconfig(path)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "certs", "ca.crt"), cfg.CAFile, "relative to the kubeconfig's directory")
	assert.Equal(t, filepath.Join(dir, "certs", "client.crt"), cfg.CertFile)
	assert.Equal(t, filepath.Join(dir, "certs", "client.key"), cfg.KeyFile, "absolute paths are kept")
	assert.Equal(t, filepath.Join(dir, "certs", "token"), cfg.BearerTokenFile)
	assert.Empty(t, cfg.BearerToken, "tokenFile wins over token")
	assert.Equal(t, "kubernetes.default", cfg.TLSServerName)
	_, err = rest.New(cfg)
	require.NoError(t, err, "every referenced file exists and parses")
}

func TestLoadKubeconfigContextSelection(t *testing.T) {
	path := writeKubeconfig(t, t.TempDir(), `
current-context: a
clusters:
- {name: ca, cluster: {server: "https://a.example:6443", insecure-skip-tls-verify: true}}
- {name: cb, cluster: {server: "https://b.example:6443"}}
users:
- {name: ub, user: {token: b-token}}
contexts:
- {name: a, context: {cluster: ca}}
- {name: b, context: {cluster: cb, user: ub}}
- {name: dangling, context: {cluster: nowhere}}
`)
	cfg, err := LoadKubeconfig(path)
	require.NoError(t, err)
	assert.Equal(t, "https://a.example:6443", cfg.Host)
	assert.True(t, cfg.Insecure)
	assert.Empty(t, cfg.BearerToken, "context a has no user: anonymous")

	cfg, err = LoadKubeconfigContext(path, "b")
	require.NoError(t, err)
	assert.Equal(t, "https://b.example:6443", cfg.Host)
	assert.Equal(t, "b-token", cfg.BearerToken)
	assert.False(t, cfg.Insecure)

	_, err = LoadKubeconfigContext(path, "missing")
	assert.ErrorIs(t, err, rest.ErrInvalidConfig)
	_, err = LoadKubeconfigContext(path, "dangling")
	assert.ErrorIs(t, err, rest.ErrInvalidConfig)
}

func TestLoadKubeconfigUnsupported(t *testing.T) {
	cases := []struct {
		name, cluster, user, wantField string
	}{
		{"exec plugin needing a terminal", "", "exec: {apiVersion: client.authentication.k8s.io/v1, command: aws, interactiveMode: Always}", "exec.interactiveMode"},
		{"exec v1alpha1", "", "exec: {apiVersion: client.authentication.k8s.io/v1alpha1, command: aws}", "exec.apiVersion"},
		{"auth provider", "", "auth-provider: {name: gcp}", "auth-provider"},
		{"basic auth", "", "username: admin\n    password: hunter2", "username/password"},
		{"impersonation", "", "token: t\n    as: system:admin", "as"},
		{"impersonated groups", "", "token: t\n    as-groups: [system:masters]", "as"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeKubeconfig(t, t.TempDir(), `
current-context: x
clusters:
- name: c
  cluster:
    server: https://h:6443
    `+tc.cluster+`
users:
- name: u
  user:
    `+tc.user+`
contexts:
- {name: x, context: {cluster: c, user: u}}
`)
			_, err := LoadKubeconfig(path)
			require.ErrorIs(t, err, ErrUnsupported)
			var ue *UnsupportedError
			require.ErrorAs(t, err, &ue)
			assert.True(t, strings.HasSuffix(ue.Field, tc.wantField), "field %q", ue.Field)
		})
	}
}

func TestLoadKubeconfigBadFiles(t *testing.T) {
	dir := t.TempDir()
	_, err := LoadKubeconfig(filepath.Join(dir, "absent"))
	assert.ErrorIs(t, err, os.ErrNotExist)

	_, err = LoadKubeconfig(writeKubeconfig(t, dir, "clusters: [unclosed"))
	assert.Error(t, err)

	_, err = LoadKubeconfig(writeKubeconfig(t, dir, "users: [{name: u, user: {token: t}}]\n"))
	assert.ErrorIs(t, err, rest.ErrInvalidConfig, "no current-context")

	// A contradiction inside the file surfaces as a typed config error.
	_, err = LoadKubeconfig(writeKubeconfig(t, dir, `
current-context: x
clusters: [{name: c, cluster: {server: "https://h", insecure-skip-tls-verify: true, certificate-authority: ca.crt}}]
contexts: [{name: x, context: {cluster: c}}]
`))
	var ce *rest.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "Insecure", ce.Field)
}
