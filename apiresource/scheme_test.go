package apiresource_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed31a95821/informer/apiresource"
)

// The default scheme holds every group version of the k8s.io/api module in
// go.mod: each of its packages with a register.go has a type in the scheme.
// An upgrade that adds a group fails here until NewScheme registers it.
func TestNewSchemeRegistersEveryGroupOfK8sAPI(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/api").Output()
	if err != nil {
		t.Skipf("cannot locate the k8s.io/api module: %v", err)
	}
	dir := strings.TrimSpace(string(out))
	registers, err := filepath.Glob(filepath.Join(dir, "*", "*", "register.go"))
	require.NoError(t, err)
	require.NotEmpty(t, registers)
	want := map[string]bool{}
	for _, f := range registers {
		rel, err := filepath.Rel(dir, filepath.Dir(f))
		require.NoError(t, err)
		want["k8s.io/api/"+filepath.ToSlash(rel)] = true
	}
	got := map[string]bool{}
	for _, typ := range apiresource.NewScheme().AllKnownTypes() {
		if strings.HasPrefix(typ.PkgPath(), "k8s.io/api/") {
			got[typ.PkgPath()] = true
		}
	}
	assert.Equal(t, want, got)
}
