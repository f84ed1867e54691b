package rest_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/seed31a95821/informer/rest"
)

// An authenticated client for requests the informers do not make, such as
// writes: the Config's credentials (here a token) are added to every
// request to its server, and to no other.
func ExampleNewAuthenticatedClient() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.Method, " ", r.URL.Path, " as ", r.Header.Get("Authorization"))
	}))
	defer srv.Close()

	client, err := rest.NewAuthenticatedClient(rest.Config{Host: srv.URL, BearerToken: "s3cret"})
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
