package wire

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func writeKubeconfig(t *testing.T, dir, content string) string {
	t.Helper()
	path := filepath.Join(dir, "config")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func TestLoadKubeconfigDataFields(t *testing.T) {
	pki := newTestPKI(t)
	srv, clientCN := newTLSTestServer(t, pki, true)
	path := writeKubeconfig(t, t.TempDir(), `
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster:
    server: `+srv.URL+`
    certificate-authority-data: `+b64(pki.caPEM)+`
users:
- name: alice
  user:
    client-certificate-data: `+b64(pki.clientCert)+`
    client-key-data: `+b64(pki.clientKey)+`
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
	assert.Equal(t, pki.caPEM, cfg.CAData)
	assert.Equal(t, pki.clientCert, cfg.CertData)

	// The loaded Config reaches the mutual-TLS server as alice.
	require.NoError(t, listOnce(t, cfg))
	assert.Equal(t, "alice", clientCN())
}

func TestLoadKubeconfigRelativeFilePaths(t *testing.T) {
	pki := newTestPKI(t)
	dir := t.TempDir()
	pki.writeFiles(t, filepath.Join(dir, "certs"))
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
	_, err = New(cfg, podsGVR, Options{})
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
	assert.ErrorIs(t, err, ErrInvalidConfig)
	_, err = LoadKubeconfigContext(path, "dangling")
	assert.ErrorIs(t, err, ErrInvalidConfig)
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
	assert.ErrorIs(t, err, ErrInvalidConfig, "no current-context")

	// A contradiction inside the file surfaces as a typed config error.
	_, err = LoadKubeconfig(writeKubeconfig(t, dir, `
current-context: x
clusters: [{name: c, cluster: {server: "https://h", insecure-skip-tls-verify: true, certificate-authority: ca.crt}}]
contexts: [{name: x, context: {cluster: c}}]
`))
	var ce *ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "Insecure", ce.Field)
}

func TestConfigValidate(t *testing.T) {
	ok := Config{Host: "https://h:6443"}
	cases := []struct {
		name  string
		edit  func(*Config)
		field string // "" = valid
	}{
		{"minimal", func(c *Config) {}, ""},
		{"http with path prefix", func(c *Config) { c.Host = "http://127.0.0.1:8080/prefix" }, ""},
		{"no host", func(c *Config) { c.Host = "" }, "Host"},
		{"no scheme", func(c *Config) { c.Host = "h:6443" }, "Host"},
		{"ftp", func(c *Config) { c.Host = "ftp://h" }, "Host"},
		{"query in host", func(c *Config) { c.Host = "https://h/?x=1" }, "Host"},
		{"token and token file", func(c *Config) { c.BearerToken, c.BearerTokenFile = "t", "/f" }, "BearerTokenFile"},
		{"cert without key", func(c *Config) { c.CertFile = "/c" }, "CertFile/KeyFile"},
		{"key data without cert", func(c *Config) { c.KeyData = []byte("k") }, "CertFile/KeyFile"},
		{"cert data, key file", func(c *Config) { c.CertData, c.KeyFile = []byte("c"), "/k" }, ""},
		{"cert file, key data", func(c *Config) { c.CertFile, c.KeyData = "/c", []byte("k") }, ""},
		{"cert file and data", func(c *Config) { c.CertFile, c.KeyFile, c.CertData, c.KeyData = "/c", "/k", []byte("c"), []byte("k") }, "CertData"},
		{"key file and data", func(c *Config) { c.CertFile, c.KeyFile, c.KeyData = "/c", "/k", []byte("k") }, "KeyData"},
		{"CA file and data", func(c *Config) { c.CAFile, c.CAData = "/ca", []byte("ca") }, "CAData"},
		{"insecure with CA", func(c *Config) { c.Insecure, c.CAData = true, []byte("ca") }, "Insecure"},
		{"bad content type", func(c *Config) { c.ContentType = "application/yaml" }, "ContentType"},
		{"negative frame limit", func(c *Config) { c.MaxFrameBytes = -1 }, "MaxFrameBytes"},
		{"frame limit beyond 32 bits", func(c *Config) { c.MaxFrameBytes = 1 << 33 }, "MaxFrameBytes"},
		{"negative object limit", func(c *Config) { c.MaxObjectBytes = -1 }, "MaxObjectBytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			err := c.Validate()
			if tc.field == "" {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalidConfig)
			var ce *ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.field, ce.Field)
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	c := Config{Host: "https://h"}.WithDefaults()
	assert.EqualValues(t, DefaultMaxFrameBytes, c.MaxFrameBytes)
	assert.EqualValues(t, DefaultMaxObjectBytes, c.MaxObjectBytes)
	assert.Equal(t, DefaultTimeout, c.Timeout)
	assert.Equal(t, DefaultUserAgent, c.UserAgent)

	_, err := New(Config{Host: "https://h", ContentType: ContentTypeProtobuf}, podsGVR, Options{Scheme: NewScheme()})
	assert.NoError(t, err)
	_, err = New(Config{Host: "https://h"}, podsGVR.GroupVersion().WithResource(""), Options{})
	assert.ErrorIs(t, err, ErrInvalidConfig)
	_, err = New(Config{}, podsGVR, Options{})
	assert.ErrorIs(t, err, ErrInvalidConfig)
}

// A negative Timeout turns the client-side bound off; taken literally as a
// -1ns deadline it would fail every List.
func TestNegativeTimeoutDisablesIt(t *testing.T) {
	ts := newTestServer(t, serveBody(ContentTypeJSON, 200, newWireEncoder(ContentTypeJSON).object(t, testPodList("1", "", 0))))
	lw := newTestLW(t, ts, Options{}, func(c *Config) { c.Timeout = -1 })
	_, err := lw.List(context.Background(), metav1.ListOptions{})
	assert.NoError(t, err)
}
