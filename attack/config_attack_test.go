package attack_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/kubeconfig"
	"github.com/seed31a95821/informer/rest"
)

// Attacks through configuration (issue 32, item 3): a kubeconfig is input
// like any other, and so is every file it names. Each hostile file here
// is refused with a *rest.FileError before it is read: a file one byte
// over rest.MaxFileBytes (sparse, so it costs no disk), or a directory.
// (/dev/zero and FIFOs are refused too, as reflector/wire's
// TestHostileFilesAreRefused shows; they are left out here because,
// before the fix, they exhausted memory or hung.)
func TestAttackKubeconfigHostileFiles(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge")
	f, err := os.Create(huge)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(rest.MaxFileBytes+1))
	require.NoError(t, f.Close())
	kubeconfig := func(user, cluster string) string {
		p := filepath.Join(t.TempDir(), "config")
		body := "current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n" +
			"clusters: [{name: k, cluster: {server: \"https://127.0.0.1:1\"" + cluster + "}}]\n" +
			"users: [{name: u, user: {" + user + "}}]\n"
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	tests := map[string]string{
		"the kubeconfig itself":      huge,
		"a kubeconfig directory":     dir,
		"certificate-authority":      kubeconfig("token: t", ", certificate-authority: "+huge),
		"tokenFile":                  kubeconfig("tokenFile: "+huge, ""),
		"client-certificate and key": kubeconfig("client-certificate: "+huge+", client-key: "+huge, ""),
		"tokenFile a directory":      kubeconfig("tokenFile: "+dir, ""),
	}
	for name, path := range tests {
		t.Run(name, func(t *testing.T) {
			runtime.GC()
			_, allocs0 := readMetrics()
			err := startFrom(path)
			_, allocs := readMetrics()
			require.ErrorIs(t, err, rest.ErrFileRefused)
			var fe *rest.FileError
			require.ErrorAs(t, err, &fe)
			require.Contains(t, []string{huge, dir}, fe.Path)
			require.Less(t, allocs-allocs0, uint64(4<<20), "bytes allocated: the file was read")
		})
	}
}

// startFrom loads a kubeconfig and builds a pod informer from it, as a
// program would, and returns the first error.
func startFrom(path string) error {
	loaded, err := kubeconfig.LoadingRules{Paths: []string{path}}.Load()
	if err != nil {
		return err
	}
	f := informer.NewFactory(loaded.Config, informer.FactoryOptions{})
	defer f.Shutdown()
	_, err = informer.For[*corev1.Pod](f)
	return err
}
