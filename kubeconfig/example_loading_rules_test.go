package kubeconfig_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/seed31a95821/informer/kubeconfig"
)

// Two kubeconfig files given as a KUBECONFIG-style list, merged as kubectl
// merges them: the first file's current-context and contexts, the second
// file's cluster and user. --context picks another context.
func ExampleLoadingRules() {
	dir, err := os.MkdirTemp("", "kubeconfig")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	contexts := filepath.Join(dir, "contexts")
	credentials := filepath.Join(dir, "credentials")
	_ = os.WriteFile(contexts, []byte(`
current-context: shop
contexts:
- {name: shop, context: {cluster: prod, user: ci, namespace: shop}}
- {name: blog, context: {cluster: prod, user: ci, namespace: blog}}
`), 0o600)
	_ = os.WriteFile(credentials, []byte(`
clusters: [{name: prod, cluster: {server: "https://prod.example:6443"}}]
users: [{name: ci, user: {token: s3cret}}]
`), 0o600)

	// Paths: nil would read $KUBECONFIG, as LoadingRules{}.Load() does.
	rules := kubeconfig.LoadingRules{Paths: filepath.SplitList(contexts + string(filepath.ListSeparator) + credentials)}
	l, err := rules.Load()
	fmt.Println(l.Context, l.Namespace, l.Config.Host, l.Config.BearerToken, err)

	rules.Context = "blog"
	l, err = rules.Load()
	fmt.Println(l.Context, l.Namespace, err)
	// Output:
	// shop shop https://prod.example:6443 s3cret <nil>
	// blog blog <nil>
}

// Loading a kubeconfig's current context: the rest.Config it returns is what
// rest.New takes. Relative paths in the file are resolved against its directory.
func ExampleLoadKubeconfig() {
	dir, err := os.MkdirTemp("", "kubeconfig")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "config")
	_ = os.WriteFile(path, []byte(`
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev
  cluster:
    server: https://127.0.0.1:6443
    insecure-skip-tls-verify: true
users:
- name: dev
  user:
    token: s3cret
contexts:
- name: dev
  context: {cluster: dev, user: dev}
`), 0o600)

	cfg, err := kubeconfig.LoadKubeconfig(path)
	fmt.Println(cfg.Host, cfg.BearerToken, cfg.Insecure, err)

	// An auth provider (the removed in-tree cloud logins) is refused with a
	// typed error naming the field.
	_ = os.WriteFile(path, []byte(`
current-context: gke
clusters: [{name: gke, cluster: {server: "https://gke.example"}}]
users: [{name: gke, user: {auth-provider: {name: gcp}}}]
contexts: [{name: gke, context: {cluster: gke, user: gke}}]
`), 0o600)
	_, err = kubeconfig.LoadKubeconfig(path)
	var unsupported *kubeconfig.UnsupportedError
	fmt.Println(errors.Is(err, kubeconfig.ErrUnsupported), errors.As(err, &unsupported) && unsupported.Field == `users["gke"].user.auth-provider`)
	// Output:
	// https://127.0.0.1:6443 s3cret true <nil>
	// true true
}
