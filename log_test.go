package informer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"go/parser"
	"go/token"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/rest"
)

// lockedBuffer is a bytes.Buffer safe for the informer's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestErrorsAreLoggedWithKeys: with no OnError, an error reaches
// Options.Logger as one structured line naming the resource, the object
// and the kind of error.
func TestErrorsAreLoggedWithKeys(t *testing.T) {
	srv := mustServe(pod("shop", "web-1", nil))
	defer srv.Close()
	var out lockedBuffer
	logger := slog.New(slog.NewJSONHandler(&out, nil))
	factory := informer.NewFactory(rest.Config{Host: srv.URL()}, informer.FactoryOptions{
		Informer: informer.Options{Logger: logger},
	})
	defer factory.Shutdown()
	pods, err := informer.For[*corev1.Pod](factory)
	require.NoError(t, err)
	_, err = pods.AddEventHandler(informer.Handler[*corev1.Pod]{
		OnAdd: func(*corev1.Pod, bool) { panic("boom") },
	}, informer.HandlerOptions{Name: "broken"})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	factory.Start(ctx)

	require.Eventually(t, func() bool { return strings.Contains(out.String(), "\n") }, 10*time.Second, 5*time.Millisecond)
	var line map[string]any
	require.NoError(t, json.Unmarshal([]byte(strings.SplitN(out.String(), "\n", 2)[0]), &line))
	assert.Equal(t, "ERROR", line["level"])
	assert.Equal(t, "pods", line["informer"])
	assert.Equal(t, "pods", line["resource"])
	assert.Equal(t, "HandlerPanic", line["error_kind"])
	assert.Equal(t, "broken", line["handler"])
	assert.Equal(t, "shop", line["namespace"])
	assert.Equal(t, "web-1", line["name"])
	assert.Contains(t, line["error"], "boom")
	assert.Contains(t, line, "resourceVersion")
}

// TestNoStandardLogInLibrary: every place the library logs takes a
// *slog.Logger; only commands (cmd/ directories) and tests may use the
// standard log package, whose global logger a library must not write to.
func TestNoStandardLogInLibrary(t *testing.T) {
	fset := token.NewFileSet()
	var offenders []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (d.Name() == "cmd" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || isOtherModule(path)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "log" {
				offenders = append(offenders, path)
			}
		}
		return nil
	})
	require.NoError(t, err)
	assert.Empty(t, offenders, "library files importing the standard log package")
}

// isOtherModule reports whether dir holds a go.mod of its own (bench/,
// metrics/prometheus/): not part of this module.
func isOtherModule(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "go.mod"))
	return err == nil
}
