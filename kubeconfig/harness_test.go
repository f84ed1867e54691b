package kubeconfig

// Test helpers of this package's own; the PKI and the test servers it
// shares with packages rest and reflector/wire are in internal/testserver.

import (
	"context"
	"net/http"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/internal/testserver"
	"github.com/seed31a95821/informer/reflector/wire"
	"github.com/seed31a95821/informer/rest"
	"github.com/stretchr/testify/require"
)

// tokenServer accepts exactly one token at a time and answers 401 to
// anything else.
func tokenServer(t *testing.T, valid *string, mu *sync.Mutex) *testserver.Recorder {
	body := testserver.PodListJSON(t)
	return testserver.New(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ok := r.Header.Get("Authorization") == "Bearer "+*valid
		mu.Unlock()
		if !ok {
			testserver.ServeBody("", http.StatusUnauthorized, nil)(w, r)
			return
		}
		testserver.ServeBody(rest.ContentTypeJSON, http.StatusOK, body)(w, r)
	})
}

// podsGVR is the resource the tests list.
var podsGVR = corev1.SchemeGroupVersion.WithResource("pods")

// listOnce lists pods once through a ListerWatcher built on cfg.
func listOnce(t *testing.T, cfg rest.Config) error {
	t.Helper()
	rc, err := rest.New(cfg)
	require.NoError(t, err)
	defer rc.CloseIdleConnections()
	lw, err := wire.New(rc, apiresource.Guess(corev1.SchemeGroupVersion.WithKind("Pod")), wire.Options{})
	require.NoError(t, err)
	_, err = lw.List(context.Background(), metav1.ListOptions{})
	return err
}
