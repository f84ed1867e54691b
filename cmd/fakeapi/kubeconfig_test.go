package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/kubeconfig"
	"github.com/seed31a95821/informer/reflector/wire"
	"github.com/seed31a95821/informer/rest"
)

// startInProcess runs the command's run function until the test ends and
// returns the URL it printed.
func startInProcess(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, &stdout, &stderr) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	require.Eventually(t, func() bool { return strings.Contains(stdout.String(), "\n") }, 30*time.Second, 5*time.Millisecond,
		"no URL printed; stderr: %s", stderr.String())
	return strings.TrimSpace(stdout.String())
}

// With -token and -kubeconfig-out the server speaks TLS, and the kubeconfig
// it writes is enough for our loader: the CA verifies the server and the
// token is accepted.
func TestKubeconfigOutWithToken(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // registered first, so it runs after the server has stopped
	path := filepath.Join(t.TempDir(), "kubeconfig")
	url := startInProcess(t, "-pods", "7", "-token", "s3cret", "-kubeconfig-out", path)
	require.True(t, strings.HasPrefix(url, "https://127.0.0.1:"), url)

	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the file holds the token")

	l, err := kubeconfig.LoadingRules{ExplicitPath: path, Getenv: func(string) string { return "" }}.Load()
	require.NoError(t, err)
	assert.Equal(t, url, l.Config.Host)
	assert.NotEmpty(t, l.Config.CAData, "verified against the generated CA, not skipped")
	assert.False(t, l.Config.Insecure)
	assert.Equal(t, "default", l.Namespace)

	client, err := rest.NewHTTPClient(l.Config)
	require.NoError(t, err)
	defer client.CloseIdleConnections()
	pods := apiresource.Guess(corev1.SchemeGroupVersion.WithKind("Pod"))
	cfg := l.Config
	cfg.HTTPClient = client
	rc, err := rest.New(cfg)
	require.NoError(t, err)
	lw, err := wire.New(rc, pods, wire.Options{})
	require.NoError(t, err)
	list, err := lw.List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, list.(*corev1.PodList).Items, 7)

	cfg.BearerToken = "wrong"
	rc, err = rest.New(cfg)
	require.NoError(t, err)
	lw, err = wire.New(rc, pods, wire.Options{})
	require.NoError(t, err)
	_, err = lw.List(context.Background(), metav1.ListOptions{})
	assert.True(t, apierrors.IsUnauthorized(err), "the token is checked: %v", err)
}

// The same kubeconfig works for the real kubectl, which refuses to send a
// token over plain HTTP: hence TLS.
func TestKubeconfigOutWorksForKubectl(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil || testing.Short() {
		t.Skip("needs kubectl in $PATH (and not -short)")
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	startInProcess(t, "-pods", "5", "-namespaces", "a,b", "-token", "s3cret", "-kubeconfig-out", path)
	cmd := exec.Command(kubectl, "--kubeconfig", path, "get", "pods", "-A", "--no-headers")
	// kubectl keeps a discovery cache in ~/.kube: give it a home of its own.
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	assert.Len(t, lines, 5, "%s", out)
	assert.Regexp(t, `^(a|b)\s+`, lines[0])
}

// -kubeconfig-out without a token serves plain HTTP with an anonymous user.
func TestKubeconfigOutWithoutToken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	url := startInProcess(t, "-kubeconfig-out", path)
	require.True(t, strings.HasPrefix(url, "http://"), url)
	l, err := kubeconfig.LoadingRules{ExplicitPath: path, Getenv: func(string) string { return "" }}.Load()
	require.NoError(t, err)
	assert.Equal(t, url, l.Config.Host)
	assert.Empty(t, l.Config.BearerToken)
}
