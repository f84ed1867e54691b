package informer_test

import (
	"context"
	"fmt"
	"log"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/rest"
	"github.com/seed31a95821/informer/workqueue"
)

// A ReplicaSet controller watches Pods but works on ReplicaSets:
// EnqueueOwner turns each Pod event into the key of the ReplicaSet that
// controls it, and ignores Pods nobody controls.
func ExampleEnqueueOwner() {
	owned := pod("shop", "web-abc12", nil)
	owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "rs-1", Controller: ptr.To(true)}}
	srv := mustServe(owned, pod("shop", "loner", nil))
	defer srv.Close()

	factory := informer.NewFactory(rest.Config{Host: srv.URL()}, informer.FactoryOptions{})
	pods, err := informer.For[*corev1.Pod](factory)
	if err != nil {
		log.Fatal(err)
	}
	queue := &workqueue.Queue[string]{}
	rs := apiresource.Guess(appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))
	reg, err := pods.AddEventHandler(informer.EnqueueOwner[*corev1.Pod](queue, rs), informer.HandlerOptions{})
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	factory.Start(ctx)
	defer factory.Shutdown()
	if !informer.WaitForCacheSync(ctx, reg) {
		log.Fatal("not synced")
	}
	key, _ := queue.Get()
	fmt.Println(key, queue.Len())
	// Output: shop/web 0
}
