package wire_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"

	"github.com/seed31a95821/informer/rest"

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

	rc, err := rest.New(rest.Config{Host: srv.URL})
	if err != nil {
		panic(err)
	}
	pods := apiresource.Guess(corev1.SchemeGroupVersion.WithKind("Pod"))
	lw, err := wire.New(rc, pods, wire.Options{Namespace: "default"})
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

// Two ListerWatchers, one budget: every ListerWatcher built on one
// rest.Client shares its rate limit (and its connections).
// (informer.NewFactory builds one rest.Client for all the informers it
// makes.)
func Example_sharedClient() {
	srv := fakeAPIServer()
	defer srv.Close()

	// A slow refill (one request per 100s, after a burst of 40), so that
	// the count below does not depend on how fast the lists ran.
	cfg := rest.Config{Host: srv.URL, QPS: 0.01, Burst: 40}
	cfg.RateLimiter = rest.NewRateLimiter(cfg)
	rc, err := rest.New(cfg)
	if err != nil {
		panic(err)
	}
	pods, err := wire.New(rc, apiresource.Guess(corev1.SchemeGroupVersion.WithKind("Pod")), wire.Options{})
	if err != nil {
		panic(err)
	}
	defer pods.CloseIdleConnections()
	more, err := wire.New(rc, apiresource.Guess(corev1.SchemeGroupVersion.WithKind("Pod")), wire.Options{Namespace: "default"})
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
