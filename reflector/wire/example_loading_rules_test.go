package wire_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed31a95821/informer/reflector/wire"
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
	rules := wire.LoadingRules{Paths: filepath.SplitList(contexts + string(filepath.ListSeparator) + credentials)}
	l, err := rules.Load()
	fmt.Println(l.Context, l.Namespace, l.Config.Host, l.Config.BearerToken, err)

	rules.Context = "blog"
	l, err = rules.Load()
	fmt.Println(l.Context, l.Namespace, err)
	// Output:
	// shop shop https://prod.example:6443 s3cret <nil>
	// blog blog <nil>
}

// An authenticated client for requests the informers do not make, such as
// writes: the Config's credentials (here a token) are added to every
// request to its server, and to no other.
func ExampleNewAuthenticatedClient() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.Method, " ", r.URL.Path, " as ", r.Header.Get("Authorization"))
	}))
	defer srv.Close()

	client, err := wire.NewAuthenticatedClient(wire.Config{Host: srv.URL, BearerToken: "s3cret"})
	if err != nil {
		panic(err)
	}
	defer client.CloseIdleConnections()
	resp, err := client.Post(srv.URL+"/api/v1/namespaces/shop/configmaps", "application/json", strings.NewReader(`{}`))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	fmt.Println(string(body), err)
	// Output:
	// POST /api/v1/namespaces/shop/configmaps as Bearer s3cret <nil>
}
