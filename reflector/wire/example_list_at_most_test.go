package wire_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/rest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer/reflector/wire"
)

// ListAtMost refuses a page with more items than it may hold before it
// decodes one: here a hostile page of a million empty items, 3 MB on the
// wire that would decode into 1.2 GB of Pods (1,240 bytes each). A
// reflector calls it with the room left under its MaxListItems.
func ExampleListerWatcher_ListAtMost() {
	items := strings.Repeat("{},", 1_000_000)
	body := `{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[` + items[:len(items)-1] + `]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()

	rc, err := rest.New(rest.Config{Host: srv.URL})
	if err != nil {
		panic(err)
	}
	lw, err := wire.New(rc, apiresource.Guess(corev1.SchemeGroupVersion.WithKind("Pod")), wire.Options{})
	if err != nil {
		panic(err)
	}
	defer lw.CloseIdleConnections()
	_, err = lw.ListAtMost(context.Background(), metav1.ListOptions{}, 1000)
	fmt.Println(errors.Is(err, wire.ErrTooManyItems))
	fmt.Println(err)
	// Output:
	// true
	// wire: list pods: wire: too many items in a list page: more than 1000 items in one page
}
