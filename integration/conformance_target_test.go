package integration

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/integration/realapi"
	"github.com/seed31a95821/informer/kubeconfig"
	"github.com/seed31a95821/informer/rest"
)

// apiServer is one running API server as the scenarios see it: how to reach
// it (a rest.Config read from its kubeconfig by our own loader), a client to
// write through, and how to make it forget its history.
type apiServer struct {
	// cfg reaches the server directly. Scenarios point informers at a proxy
	// in front of it instead (env.cfg).
	cfg    rest.Config
	client *apiClient
	// compact discards every resourceVersion older than the current one, so
	// that a watch resumed from one of them gets 410 Expired.
	compact func(t testing.TB)
}

// target is one column of the conformance table: a kind of server, with
// everything the scenarios need from it.
type target struct {
	name string
	// main serves every scenario but those that need a 410.
	main *apiServer
	// history is the server whose compaction reaches watches. For fakeapi it
	// is main. kube-apiserver answers most watches from its watch cache,
	// which keeps its own window of history whatever etcd forgets, so the
	// 410 scenarios run against a second kube-apiserver started with
	// --watch-cache=false, whose watches read etcd.
	history *apiServer
	// skipped, when not empty, is why this column did not run.
	skipped string
}

const (
	fakeapiColumn = "fakeapi"
	realColumn    = "kube-apiserver"
)

// newFakeTarget starts a fakeapi server with a bearer token, writes a
// kubeconfig for it and reads that back with kubeconfig.LoadKubeconfig: the same
// path to the server as for kube-apiserver.
func newFakeTarget(t *testing.T) *target {
	t.Helper()
	const token = "conformance-token"
	srv, err := fakeapi.NewServer(fakeapi.Options{Token: token})
	if err != nil {
		t.Fatalf("fakeapi: %v", err)
	}
	t.Cleanup(srv.Close)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	writeKubeconfig(t, kubeconfig, srv.URL(), token)
	s := loadServer(t, kubeconfig)
	s.compact = func(testing.TB) { srv.Compact() }
	return &target{name: fakeapiColumn, main: s, history: s}
}

// newRealTarget starts the two kube-apiservers (with and without the watch
// cache) at once. Under -short it returns a skipped column instead of
// starting anything. A server that cannot be built or started fails t: the
// column is never skipped silently.
func newRealTarget(t *testing.T) *target {
	t.Helper()
	if testing.Short() {
		return &target{name: realColumn, skipped: "skipped under -short"}
	}
	clusters := realapi.StartAll(t, realapi.Options{}, realapi.Options{DisableWatchCache: true})
	cached, uncached := clusters[0], clusters[1]
	main := loadServer(t, cached.Kubeconfig)
	main.compact = func(t testing.TB) { cached.EtcdCompact(t) }
	history := loadServer(t, uncached.Kubeconfig)
	history.compact = func(t testing.TB) { uncached.EtcdCompact(t) }
	return &target{name: realColumn, main: main, history: history}
}

// loadServer reads a kubeconfig with the loader under test and checks that
// it verifies the server: a CA and no Insecure.
func loadServer(t *testing.T, path string) *apiServer {
	t.Helper()
	cfg, err := kubeconfig.LoadKubeconfig(path)
	if err != nil {
		t.Fatalf("LoadKubeconfig(%s): %v", path, err)
	}
	u, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatalf("kubeconfig server %q: %v", cfg.Host, err)
	}
	if cfg.Insecure || (u.Scheme == "https" && cfg.CAFile == "" && len(cfg.CAData) == 0) {
		t.Fatalf("kubeconfig %s does not verify the server (insecure=%v, no CA)", path, cfg.Insecure)
	}
	return &apiServer{cfg: cfg, client: newAPIClient(t, cfg)}
}

// writeKubeconfig writes the smallest kubeconfig naming server and token.
func writeKubeconfig(t *testing.T, path, server, token string) {
	t.Helper()
	text := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: fakeapi
  cluster:
    server: %s
users:
- name: tester
  user:
    token: %s
contexts:
- name: fakeapi
  context:
    cluster: fakeapi
    user: tester
current-context: fakeapi
`, server, token)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// viaProxy returns cfg pointed at a new proxy in front of the server, which
// is closed when t ends. The host stays 127.0.0.1, so the real server's
// certificate still verifies.
func viaProxy(t testing.TB, cfg rest.Config) (rest.Config, *tcpProxy) {
	t.Helper()
	u, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatalf("proxy: %v", err)
	}
	p := newTCPProxy(t, u.Host)
	u.Host = p.Addr()
	cfg.Host = u.String()
	return cfg, p
}
