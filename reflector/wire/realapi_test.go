package wire_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed31a95821/informer/kubeconfig"
	"github.com/seed31a95821/informer/rest"

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
	cfg, err := kubeconfig.LoadKubeconfig(cluster.Kubeconfig)
	require.NoError(t, err)
	for _, ct := range []string{rest.ContentTypeJSON, rest.ContentTypeProtobuf} {
		t.Run(ct, func(t *testing.T) {
			// A namespace per encoding, seeded with three pods.
			short := map[string]string{rest.ContentTypeJSON: "json", rest.ContentTypeProtobuf: "pb"}[ct]
			ns := "wire-" + short
			postJSON(t, cluster, "/api/v1/namespaces", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
			for i := range 3 {
				postJSON(t, cluster, "/api/v1/namespaces/"+ns+"/pods", realPod(fmt.Sprintf("seed-%d", i)))
			}
			c := cfg
			c.ContentType = ct
			client, err := rest.NewHTTPClient(c)
			require.NoError(t, err)
			rec := &contentTypeRecorder{next: client.Transport}
			client.Transport = rec
			c.HTTPClient = client
			lw, err := wire.New(newRESTClient(t, c), podsResource, wire.Options{Namespace: ns})
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
			name := "live-" + short
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

			// WatchList: initial ADDED events, then the bookmark annotated
			// k8s.io/initial-events-end.
			sendInitial := true
			wl, err := lw.Watch(ctx, metav1.ListOptions{SendInitialEvents: &sendInitial,
				ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
			require.NoError(t, err)
			defer wl.Stop()
			initial := 0
			for done := false; !done; {
				select {
				case ev, ok := <-wl.ResultChan():
					require.True(t, ok, "watch ended: %v", wl.(*wire.Watcher).Err())
					switch ev.Type {
					case watch.Added:
						initial++
					case watch.Bookmark:
						done = ev.Object.(*corev1.Pod).Annotations[metav1.InitialEventsAnnotationKey] == "true"
					default:
						t.Fatalf("unexpected %s", ev.Type)
					}
				case <-deadline:
					t.Fatal("no end-of-initial-events bookmark from the real server")
				}
			}
			assert.Equal(t, 4, initial)

			// The server really answered in the encoding asked for.
			require.GreaterOrEqual(t, len(rec.seen()), 4, "two pages and two watches")
			for _, got := range rec.seen() {
				assert.True(t, strings.HasPrefix(got, ct), "response Content-Type %q, want %s", got, ct)
			}

			meta, err := wire.New(newRESTClient(t, c), podsResource, wire.Options{Namespace: ns, MetadataOnly: true})
			require.NoError(t, err)
			obj, err = meta.List(ctx, metav1.ListOptions{})
			require.NoError(t, err)
			assert.Len(t, obj.(*metav1.PartialObjectMetadataList).Items, 4)
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

// contentTypeRecorder notes the Content-Type of every response.
type contentTypeRecorder struct {
	next  http.RoundTripper
	mu    sync.Mutex // guards types
	types []string
}

func (r *contentTypeRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err == nil {
		r.mu.Lock()
		r.types = append(r.types, resp.Header.Get("Content-Type"))
		r.mu.Unlock()
	}
	return resp, err
}

func (r *contentTypeRecorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.types...)
}
