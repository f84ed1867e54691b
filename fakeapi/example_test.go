package fakeapi_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strings"

	batchv1beta1 "k8s.io/api/batch/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/fakeapi"
)

// A test starts a server, writes objects with the Go API, and reads them
// back over HTTP like any client.
func Example() {
	srv, err := fakeapi.NewServer(fakeapi.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	created, _ := srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}})
	fmt.Println("stored at resourceVersion", created.(*corev1.Pod).ResourceVersion)

	resp, err := http.Get(srv.URL() + "/api/v1/namespaces/default/pods/web")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	fmt.Println("GET", resp.Status)
	// Output:
	// stored at resourceVersion 1
	// GET 200 OK
}

// Errors of the Go API are the API's own Status errors.
func ExampleServer_Update() {
	srv, _ := fakeapi.NewServer(fakeapi.Options{})
	defer srv.Close()
	_, _ = srv.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cfg"}})

	stale := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cfg", ResourceVersion: "7"},
		Data: map[string]string{"k": "v"}}
	_, err := srv.Update(stale)
	fmt.Println(apierrors.IsConflict(err))
	// Output:
	// true
}

// A watch resumes from a resourceVersion; one older than the compacted
// history is answered, as on a real server, with an ERROR event carrying
// 410 Expired inside a 200 stream.
func ExampleServer_Compact() {
	srv, _ := fakeapi.NewServer(fakeapi.Options{})
	defer srv.Close()
	for _, name := range []string{"a", "b"} {
		_, _ = srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}})
	}
	srv.Compact()

	resp, err := http.Get(srv.URL() + "/api/v1/namespaces/ns/pods?watch=true&resourceVersion=1")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	fmt.Println(resp.StatusCode)
	fmt.Println(strings.Contains(line, `"type":"ERROR"`), strings.Contains(line, `"code":410`))
	// Output:
	// 200
	// true true
}

// Faults make the next requests fail the way a busy server does.
func ExampleFaults_FailNext() {
	srv, _ := fakeapi.NewServer(fakeapi.Options{})
	defer srv.Close()
	srv.Faults().FailNext(fakeapi.Failure{Verb: "list", Resource: "pods", Code: 429, RetryAfterSeconds: 2})

	for i := 0; i < 2; i++ {
		resp, err := http.Get(srv.URL() + "/api/v1/pods")
		if err != nil {
			panic(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	// Output:
	// 429 2
	// 200
}

// SeedPods loads many pods without HTTP, for benchmarks.
func ExampleServer_SeedPods() {
	srv, _ := fakeapi.NewServer(fakeapi.Options{})
	defer srv.Close()
	_ = srv.SeedPods([]string{"a", "b"}, 1000)
	fmt.Println(srv.ResourceVersion())
	// Output:
	// 1000
}

// Serving a type beyond the defaults: describe its resource (and, for a
// type of your own, add it to a scheme that starts from
// apiresource.NewScheme). Here batch/v1beta1 CronJobs, a version
// kube-apiserver no longer serves, for a test of an old client.
func ExampleServedResource() {
	srv, err := fakeapi.NewServer(fakeapi.Options{
		Resources: []fakeapi.ServedResource{{
			Resource: apiresource.Resource{Kind: batchv1beta1.SchemeGroupVersion.WithKind("CronJob")},
		}},
	})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	_, _ = srv.Create(&batchv1beta1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "backup"},
		Spec: batchv1beta1.CronJobSpec{Schedule: "@daily"}})

	resp, err := http.Get(srv.URL() + "/apis/batch/v1beta1/namespaces/ns/cronjobs/backup")
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode)
	// Output:
	// 200
}
