package wire_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/reflector/wire"
)

// fakeAPIServer answers a pod list and a short pod watch in JSON, encoded
// with apimachinery's serializer as kube-apiserver would.
func fakeAPIServer() *httptest.Server {
	scheme := apiresource.NewScheme()
	enc := kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme, kjson.SerializerOptions{})
	encode := func(obj runtime.Object) []byte {
		var b bytes.Buffer
		_ = enc.Encode(obj, &b)
		return b.Bytes()
	}
	pod := func(name, rv string) *corev1.Pod {
		return &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: rv}}
	}
	list := &corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"},
		ListMeta: metav1.ListMeta{ResourceVersion: "10"}, Items: []corev1.Pod{*pod("web-0", "9")}}
	event := func(typ watch.EventType, obj runtime.Object) []byte {
		return encode(&metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: encode(obj)}})
	}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") != "true" {
			_, _ = w.Write(encode(list))
			return
		}
		_, _ = w.Write(event(watch.Added, pod("web-1", "11")))
		_, _ = w.Write(event(watch.Deleted, pod("web-0", "12")))
	}))
}

// List, then watch from the list's resourceVersion: the two calls a
// reflector makes.
func Example() {
	srv := fakeAPIServer()
	defer srv.Close()

	lw, err := wire.New(wire.Config{Host: srv.URL}, corev1.SchemeGroupVersion.WithResource("pods"), wire.Options{Namespace: "default"})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	obj, err := lw.List(ctx, metav1.ListOptions{ResourceVersion: "0", Limit: 500})
	if err != nil {
		panic(err)
	}
	list := obj.(*corev1.PodList)
	fmt.Println("listed", len(list.Items), "pod(s) at resourceVersion", list.ResourceVersion)

	w, err := lw.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: true})
	if err != nil {
		panic(err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		pod := ev.Object.(*corev1.Pod)
		fmt.Println(ev.Type, pod.Kind, pod.Name, pod.ResourceVersion)
	}
	// The server ended the stream cleanly, so Err is nil.
	fmt.Println("watch ended, err:", w.(*wire.Watcher).Err())
	// Output:
	// listed 1 pod(s) at resourceVersion 10
	// ADDED Pod web-1 11
	// DELETED Pod web-0 12
	// watch ended, err: <nil>
}

// Loading a kubeconfig's current context: the Config it returns is what
// New takes. Relative paths in the file are resolved against its directory.
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

	cfg, err := wire.LoadKubeconfig(path)
	fmt.Println(cfg.Host, cfg.BearerToken, cfg.Insecure, err)

	// An auth provider (the removed in-tree cloud logins) is refused with a
	// typed error naming the field.
	_ = os.WriteFile(path, []byte(`
current-context: gke
clusters: [{name: gke, cluster: {server: "https://gke.example"}}]
users: [{name: gke, user: {auth-provider: {name: gcp}}}]
contexts: [{name: gke, context: {cluster: gke, user: gke}}]
`), 0o600)
	_, err = wire.LoadKubeconfig(path)
	var unsupported *wire.UnsupportedError
	fmt.Println(errors.Is(err, wire.ErrUnsupported), errors.As(err, &unsupported) && unsupported.Field == `users["gke"].user.auth-provider`)
	// Output:
	// https://127.0.0.1:6443 s3cret true <nil>
	// true true
}

// Two ListerWatchers, one budget: a limiter in Config.RateLimiter is shared
// by every ListerWatcher built from the Config or a copy of it.
// (informer.NewFactory does this for the informers it makes.)
func ExampleNewRateLimiter() {
	srv := fakeAPIServer()
	defer srv.Close()

	// A slow refill (one request per 100s, after a burst of 40), so that
	// the count below does not depend on how fast the lists ran.
	cfg := wire.Config{Host: srv.URL, QPS: 0.01, Burst: 40}
	cfg.RateLimiter = wire.NewRateLimiter(cfg)
	pods, err := wire.New(cfg, corev1.SchemeGroupVersion.WithResource("pods"), wire.Options{})
	if err != nil {
		panic(err)
	}
	defer pods.CloseIdleConnections()
	other := cfg // a copy: the same limiter
	other.UserAgent = "second"
	more, err := wire.New(other, corev1.SchemeGroupVersion.WithResource("pods"), wire.Options{Namespace: "default"})
	if err != nil {
		panic(err)
	}
	defer more.CloseIdleConnections()
	for _, lw := range []*wire.ListerWatcher{pods, more} {
		if _, err := lw.List(context.Background(), metav1.ListOptions{}); err != nil {
			panic(err)
		}
	}
	fmt.Printf("burst %d, tokens left %.0f\n", cfg.RateLimiter.Burst(), math.Floor(cfg.RateLimiter.Tokens()))
	// Output: burst 40, tokens left 38
}
