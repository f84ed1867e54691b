package kubeconfig

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoadKubeconfig feeds arbitrary bytes to the loader: whatever the
// file holds, Load returns a rest.Config that passed Validate or an error, and
// never panics.
//
//	go test -run '^$' -fuzz FuzzLoadKubeconfig -fuzztime 30s ./reflector/wire
func FuzzLoadKubeconfig(f *testing.F) {
	f.Add([]byte("current-context: x\nclusters: [{name: c, cluster: {server: 'https://h'}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]"))
	f.Add([]byte(`{"current-context":"x","contexts":[{"name":"x","context":{"cluster":"c","user":"u"}}],"clusters":[{"name":"c","cluster":{"server":"https://h","extensions":[{"name":"client.authentication.k8s.io/exec","extension":null}]}}],"users":[{"name":"u","user":{"exec":{"apiVersion":"client.authentication.k8s.io/v1","command":"x","interactiveMode":"Never"}}}]}`))
	f.Add([]byte("users: [{name: u, user: {exec: null, auth-provider: {name: oidc}}}]"))
	f.Add([]byte("clusters: [{name: c}, {name: c}]"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "config")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		l, err := LoadingRules{ExplicitPath: path, Getenv: func(string) string { return "" }}.Load()
		if err == nil {
			if verr := l.Config.Validate(); verr != nil {
				t.Fatalf("Load returned a rest.Config that fails Validate: %v", verr)
			}
		}
	})
}
