package client_test

import (
	"context"
	"fmt"
	"log"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed31a95821/informer/client"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/rest"
)

// Create, a conflicting update retried with a fresh read, and a patch: the
// writes of a controller, over HTTP to the fake API server.
func Example() {
	srv, err := fakeapi.NewServer(fakeapi.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c, err := client.New(rest.Config{Host: srv.URL()}, client.Options{})
	if err != nil {
		log.Fatal(err)
	}
	pods, err := client.For[*corev1.Pod](c) // found as informer.For finds it: "pods", namespaced
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-1"}, // "default" exists on every cluster
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "web:1"}}},
	}
	created, err := pods.Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		log.Fatal(err)
	}

	// Someone else writes first: our copy of the pod is now stale.
	other := created.DeepCopy()
	other.Labels = map[string]string{"tier": "front"}
	if _, err := pods.Update(ctx, other, metav1.UpdateOptions{}); err != nil {
		log.Fatal(err)
	}
	stale := created.DeepCopy()
	stale.Annotations = map[string]string{"owner": "me"}
	_, err = pods.Update(ctx, stale, metav1.UpdateOptions{})
	fmt.Println("stale update conflicts:", apierrors.IsConflict(err))

	err = client.RetryOnConflict(ctx, client.DefaultRetry, func() error {
		fresh, err := pods.Get(ctx, "default", "web-1", metav1.GetOptions{})
		if err != nil {
			return err
		}
		fresh.Annotations = map[string]string{"owner": "me"}
		_, err = pods.Update(ctx, fresh, metav1.UpdateOptions{})
		return err
	})
	fmt.Println("retried update:", err)

	patched, err := pods.Patch(ctx, "default", "web-1", types.MergePatchType, []byte(`{"metadata":{"labels":{"tier":"back"}}}`), metav1.PatchOptions{}, "")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(patched.Labels["tier"], patched.Annotations["owner"])
	// Output:
	// stale update conflicts: true
	// retried update: <nil>
	// back me
}
