//go:build unix

package rest_test

import (
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/seed31a95821/informer/kubeconfig"
	"github.com/seed31a95821/informer/rest"

	"github.com/seed31a95821/informer/internal/boundedfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileFiles are files a kubeconfig may name that must not be read: each
// makes a path to one, in dir.
var hostileFiles = map[string]func(t *testing.T, dir string) string{
	// Endless: read whole, it takes all the memory there is.
	"dev-zero": func(*testing.T, string) string { return "/dev/zero" },
	"directory": func(t *testing.T, dir string) string {
		p := filepath.Join(dir, "a-directory")
		require.NoError(t, os.Mkdir(p, 0o700))
		return p
	},
	// Opened for reading, a FIFO blocks until someone writes to it.
	"fifo": func(t *testing.T, dir string) string {
		p := filepath.Join(dir, "a-fifo")
		require.NoError(t, syscall.Mkfifo(p, 0o600))
		return p
	},
	// Sparse: one byte over the limit, without using the disk.
	"one-byte-too-long": func(t *testing.T, dir string) string {
		p := filepath.Join(dir, "too-long")
		f, err := os.Create(p)
		require.NoError(t, err)
		require.NoError(t, f.Truncate(rest.MaxFileBytes+1))
		require.NoError(t, f.Close())
		return p
	},
	// A link to a device is judged by what it points to.
	"link-to-dev-zero": func(t *testing.T, dir string) string {
		p := filepath.Join(dir, "link")
		require.NoError(t, os.Symlink("/dev/zero", p))
		return p
	},
}

// fileReaders are the ways a file reaches this package, each reading the
// file at path as one kind of input. Each returns the name the package
// knows the file by (path, or a link to it in a service-account directory).
var fileReaders = map[string]func(t *testing.T, path string) (named string, err error){
	"kubeconfig": func(_ *testing.T, path string) (string, error) {
		_, err := kubeconfig.LoadKubeconfig(path)
		return path, err
	},
	"kubeconfig-in-$KUBECONFIG": func(_ *testing.T, path string) (string, error) {
		_, err := kubeconfig.LoadingRules{Getenv: func(k string) string {
			if k == "KUBECONFIG" {
				return path
			}
			return ""
		}}.Load()
		return path, err
	},
	"CA-file": func(_ *testing.T, path string) (string, error) {
		_, err := rest.NewHTTPClient(rest.Config{Host: "https://h", CAFile: path})
		return path, err
	},
	"client-certificate-file": func(_ *testing.T, path string) (string, error) {
		_, err := rest.NewHTTPClient(rest.Config{Host: "https://h", CertFile: path, KeyFile: path})
		return path, err
	},
	"token-file": func(_ *testing.T, path string) (string, error) {
		_, err := rest.New(rest.Config{Host: "https://h", BearerTokenFile: path})
		return path, err
	},
	"in-cluster-token": func(t *testing.T, path string) (string, error) {
		dir := t.TempDir()
		link := filepath.Join(dir, "token")
		require.NoError(t, os.Symlink(path, link))
		_, err := kubeconfig.InCluster{Dir: dir, Getenv: inClusterEnv}.Load()
		return link, err
	},
	"in-cluster-namespace": func(t *testing.T, path string) (string, error) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "token"), []byte("tok"), 0o600))
		link := filepath.Join(dir, "namespace")
		require.NoError(t, os.Symlink(path, link))
		_, err := kubeconfig.InCluster{Dir: dir, Getenv: inClusterEnv}.Load()
		return link, err
	},
}

func inClusterEnv(k string) string {
	return map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}[k]
}

// Every file the package reads is refused, with a *rest.FileError naming it,
// when it is not a regular file or is longer than rest.MaxFileBytes, and the
// refusal costs next to nothing: the file is not read.
func TestHostileFilesAreRefused(t *testing.T) {
	for fileName, makeFile := range hostileFiles {
		for readerName, read := range fileReaders {
			t.Run(fileName+"/"+readerName, func(t *testing.T) {
				path := makeFile(t, t.TempDir())
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				named, err := read(t, path)
				runtime.ReadMemStats(&after)
				require.ErrorIs(t, err, rest.ErrFileRefused)
				var fe *rest.FileError
				require.ErrorAs(t, err, &fe)
				assert.Equal(t, named, fe.Path, "the error names the file as it was named")
				assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(rest.MaxFileBytes/4), "the file was read")
			})
		}
	}
}

// A file at the limit is still read: the bound is rest.MaxFileBytes, inclusive.
func TestFileAtTheLimitIsRead(t *testing.T) {
	p := filepath.Join(t.TempDir(), "just-fits")
	require.NoError(t, os.WriteFile(p, []byte("tok"), 0o600))
	require.NoError(t, os.Truncate(p, rest.MaxFileBytes))
	b, err := boundedfile.ReadFile(p)
	require.NoError(t, err)
	assert.Len(t, b, rest.MaxFileBytes)
	assert.Equal(t, rest.MaxFileBytes, cap(b)-1, "one buffer, of the file's size and the byte that shows its end")
}
