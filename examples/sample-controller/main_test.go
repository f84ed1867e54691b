package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/seed31a95821/informer/integration/realapi"
	"github.com/seed31a95821/informer/internal/kubectltest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestCodeLines holds the controller to the budget: at most 260
// lines of code (blank and comment lines aside, the Foo type's files not
// counted), against the 304 of kubernetes/sample-controller's controller.go
// and main.go.
func TestCodeLines(t *testing.T) {
	notCounted := map[string]bool{"types.go": true, "deepcopy.go": true, "register.go": true}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	total := 0
	for _, f := range files {
		if notCounted[f] || strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		n := codeLines(string(data))
		t.Logf("%s: %d code lines", f, n)
		total += n
	}
	require.Positive(t, total)
	require.LessOrEqual(t, total, 260, "code lines in the sample controller")
}

// codeLines counts the lines that are neither blank nor only a comment.
func codeLines(src string) int {
	n, inBlock := 0, false
	for line := range strings.Lines(src) {
		line = strings.TrimSpace(line)
		switch {
		case inBlock:
			inBlock = !strings.Contains(line, "*/")
		case strings.HasPrefix(line, "/*"):
			inBlock = !strings.Contains(line, "*/")
		case line != "" && !strings.HasPrefix(line, "//"):
			n++
		}
	}
	return n
}

func TestCodeLinesCounts(t *testing.T) {
	require.Equal(t, 2, codeLines("package main\n\n// a comment\n/* a\nblock */\n\tx := 1 // trailing\n"))
}

// TestKubectl runs the controller against cmd/fakeapi and drives it with
// the real kubectl, as a user would a cluster (see driveWithKubectl),
// down to the Deployment collected with its Foo. It builds both commands,
// so it does not run under -short.
func TestKubectl(t *testing.T) {
	kubectl := kubectltest.Path(t)
	dir := t.TempDir()
	kubectltest.Build(t, filepath.Join(dir, "fakeapi"), "github.com/seed31a95821/informer/cmd/fakeapi")
	kubeconfig := filepath.Join(dir, "kubeconfig")
	kubectltest.Start(t, filepath.Join(dir, "fakeapi"), "-listen", "127.0.0.1:0", "-token", "t0ken", "-kubeconfig-out", kubeconfig)
	k := driveWithKubectl(t, kubectl, dir, kubeconfig)

	// fakeapi plays kube-controller-manager's garbage collector.
	require.Contains(t, k.Run("delete", "foo", "example-foo"), "deleted")
	k.Eventually("", "get", "deploy", "-l", "controller=example-foo", "-o", "name")
}

// TestRealAPI is TestKubectl against a real kube-apiserver (and etcd), from
// the realapi harness. That server runs no controller manager, so no
// garbage collector: the Deployment of a deleted Foo stays, and the test
// does not delete one. Not under -short.
func TestRealAPI(t *testing.T) {
	kubectl := kubectltest.Path(t)
	cluster := realapi.Start(t)
	driveWithKubectl(t, kubectl, t.TempDir(), cluster.Kubeconfig)
}

// driveWithKubectl builds and starts the controller against the cluster of
// kubeconfig and drives it with the real kubectl: the CRD and a Foo
// applied, the Deployment made and controlled by the Foo, the Foo's status
// following the Deployment's, the replicas following the Foo's, the
// events, and the warning for a Deployment that is someone else's.
func driveWithKubectl(t *testing.T, kubectl, dir, kubeconfig string) *kubectltest.Kubectl {
	kubectltest.Build(t, filepath.Join(dir, "sample-controller"), ".")
	k := kubectltest.New(t, kubectl, dir, kubeconfig)
	k.Run("apply", "-f", "testdata/crd.yaml")
	k.Run("wait", "--for=condition=Established", "crd/foos.samplecontroller.k8s.io", "--timeout=30s")
	health := kubectltest.Start(t, filepath.Join(dir, "sample-controller"), "-kubeconfig", kubeconfig, "-health-addr", "127.0.0.1:0", "-workers", "2",
		"-leader-elect-identity", "replica-1")
	require.Equal(t, http.StatusOK, get(t, health+"/healthz"))
	require.Eventually(t, func() bool { return get(t, health+"/readyz") == http.StatusOK }, 30*time.Second, 50*time.Millisecond)
	k.Eventually("replica-1", "get", "lease", agentName, "-o", "jsonpath={.spec.holderIdentity}")

	require.Contains(t, k.Run("apply", "-f", "testdata/foo.yaml"), "foo.samplecontroller.k8s.io/example-foo created")
	k.Eventually("Foo/example-foo", "get", "deploy", "example-foo", "-o",
		`jsonpath={.metadata.ownerReferences[?(@.controller==true)].kind}/{.metadata.ownerReferences[0].name}`)
	require.Equal(t, "2", k.Run("get", "deploy", "example-foo", "-o", "jsonpath={.spec.replicas}"))

	// No deployment controller runs here: the test plays its part (the real
	// server wants availableReplicas <= readyReplicas <= replicas).
	k.Run("patch", "deploy", "example-foo", "--subresource=status", "--type=merge", "-p",
		`{"status":{"replicas":2,"readyReplicas":2,"availableReplicas":2}}`)
	k.Eventually("2", "get", "foo", "example-foo", "-o", "jsonpath={.status.availableReplicas}")
	k.Run("patch", "foo", "example-foo", "--type=merge", "-p", `{"spec":{"replicas":3}}`)
	k.Eventually("3", "get", "deploy", "example-foo", "-o", "jsonpath={.spec.replicas}")
	k.Eventually("Synced Foo synced successfully", "get", "events", "--field-selector", "involvedObject.name=example-foo,reason=Synced",
		"-o", "jsonpath={.items[0].reason} {.items[0].message}")

	k.Run("create", "deployment", "someone-elses", "--image=nginx")
	clash := strings.ReplaceAll(k.Read("testdata/foo.yaml"), "example-foo", "clash")
	clash = strings.Replace(clash, "deploymentName: clash", "deploymentName: someone-elses", 1)
	k.Run("apply", "-f", k.Write("clash.yaml", clash))
	k.Eventually(`Warning Resource "someone-elses" already exists and is not managed by Foo`, "get", "events",
		"--field-selector", "involvedObject.name=clash,reason=ErrResourceExists", "-o", "jsonpath={.items[0].type} {.items[0].message}")
	require.Empty(t, k.Run("get", "deploy", "someone-elses", "-o", "jsonpath={.metadata.ownerReferences}"), "left alone")

	resp, err := http.Get(health + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	figures, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Regexp(t, `(?m)^workqueue_adds_total\{name="sample-controller"\} [1-9]`, string(figures))
	require.Regexp(t, `(?m)^rest_client_requests_total\{.*code="20[01]".*\} [1-9]`, string(figures))
	return k
}

func get(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	_ = resp.Body.Close()
	return resp.StatusCode
}
