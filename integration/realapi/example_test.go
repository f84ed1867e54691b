package realapi_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"testing"

	"github.com/seed31a95821/informer/integration/realapi"
)

// A test starts its own cluster; it is stopped when the test ends. This example has no
// Output line because it needs the built servers, so go test compiles it but does not run it.
func ExampleStart() {
	test := func(t *testing.T) {
		c := realapi.Start(t) // skips under -short
		resp, err := c.HTTPClient().Get(c.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		fmt.Println(resp.Status) // 200 OK
	}
	_ = test
}

// A package whose tests share one cluster starts it in TestMain with Launch.
func ExampleLaunch() {
	testMain := func(m *testing.M) {
		c, err := realapi.Launch(context.Background(), realapi.Options{Log: os.Stderr})
		if err != nil {
			log.Fatal(err) // a missing server fails the run; it is never skipped silently
		}
		code := m.Run()
		if err := c.Stop(); err != nil {
			log.Print(err)
		}
		os.Exit(code)
	}
	_ = testMain
}
