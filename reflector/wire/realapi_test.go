package wire_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer/integration/realapi"
	"github.com/seed31a95821/informer/reflector/wire"
)

// realAPIEnv opts in to the test against a real kube-apiserver. It is off by
// default because the first run builds kube-apiserver and etcd from source
// (more than ten minutes on two cores); once they are cached
// (scripts/real-apiserver.sh build) a run takes seconds:
//
//	WIRE_REALAPI=1 go test -run RealAPI ./reflector/wire/
const realAPIEnv = "WIRE_REALAPI"

// The same client, pointed by the cluster's own kubeconfig at the real
// server: lists and watches in both encodings, and metadata-only.
func TestRealAPIServer(t *testing.T) {
	if os.Getenv(realAPIEnv) == "" {
		t.Skipf("set %s=1 to run against a real kube-apiserver", realAPIEnv)
	}
	cluster := realapi.Start(t)
	cfg, err := wire.LoadKubeconfig(cluster.Kubeconfig)
	require.NoError(t, err)
	ns := "wire-test"
	postJSON(t, cluster, "/api/v1/namespaces", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	for i := range 3 {
		postJSON(t, cluster, "/api/v1/namespaces/"+ns+"/pods", realPod(fmt.Sprintf("seed-%d", i)))
	}

	for _, ct := range []string{wire.ContentTypeJSON, wire.ContentTypeProtobuf} {
		t.Run(ct, func(t *testing.T) {
			c := cfg
			c.ContentType = ct
			lw, err := wire.New(c, corev1.SchemeGroupVersion.WithResource("pods"), wire.Options{Namespace: ns})
			require.NoError(t, err)
			ctx := context.Background()

			obj, err := lw.List(ctx, metav1.ListOptions{Limit: 2})
			require.NoError(t, err)
			page := obj.(*corev1.PodList)
			require.Len(t, page.Items, 2)
			require.NotEmpty(t, page.Continue, "a third pod remains")
			obj, err = lw.List(ctx, metav1.ListOptions{Limit: 2, Continue: page.Continue})
			require.NoError(t, err)
			rest := obj.(*corev1.PodList)
			require.Len(t, rest.Items, 1)

			w, err := lw.Watch(ctx, metav1.ListOptions{ResourceVersion: rest.ResourceVersion, AllowWatchBookmarks: true})
			require.NoError(t, err)
			defer w.Stop()
			name := "live-" + map[string]string{wire.ContentTypeJSON: "json", wire.ContentTypeProtobuf: "pb"}[ct]
			postJSON(t, cluster, "/api/v1/namespaces/"+ns+"/pods", realPod(name))
			deadline := time.After(30 * time.Second)
			for added := false; !added; {
				select {
				case ev, ok := <-w.ResultChan():
					require.True(t, ok, "watch ended: %v", w.(*wire.Watcher).Err())
					if ev.Type == watch.Bookmark {
						continue
					}
					require.Equal(t, watch.Added, ev.Type)
					pod := ev.Object.(*corev1.Pod)
					assert.Equal(t, name, pod.Name)
					assert.Equal(t, "Pod", pod.Kind)
					added = true
				case <-deadline:
					t.Fatal("no ADDED event from the real server")
				}
			}
			assert.Positive(t, lw.BytesDecoded())

			meta, err := wire.New(c, corev1.SchemeGroupVersion.WithResource("pods"), wire.Options{Namespace: ns, MetadataOnly: true})
			require.NoError(t, err)
			obj, err = meta.List(ctx, metav1.ListOptions{})
			require.NoError(t, err)
			assert.GreaterOrEqual(t, len(obj.(*metav1.PartialObjectMetadataList).Items), 4)
		})
	}
}

func realPod(name string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
	}
}

// postJSON creates an object with the cluster's own HTTP client (test
// setup only; the client under test never writes).
func postJSON(t *testing.T, cluster *realapi.Cluster, path string, obj any) {
	t.Helper()
	body, err := json.Marshal(obj)
	require.NoError(t, err)
	resp, err := cluster.HTTPClient().Post(cluster.URL+path, "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode, "POST %s", path)
}
