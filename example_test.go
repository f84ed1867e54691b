package informer_test

import (
	"context"
	"fmt"
	"log"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/client"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/rest"
	"github.com/seed31a95821/informer/workqueue"
)

// pod is a minimal valid pod: one container with an image, as a real API
// server requires of every pod written over HTTP (the Examples write back).
func pod(ns, name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "web:1"}}},
	}
}

// mustServe starts the in-process API server with the given objects. Examples
// use it where a program would use a real cluster.
func mustServe(objs ...runtime.Object) *fakeapi.Server {
	srv, err := fakeapi.NewServer(fakeapi.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for _, o := range objs {
		if _, err := srv.Create(o); err != nil {
			log.Fatal(err)
		}
	}
	return srv
}

// The classic first program: a factory, a pod informer, a wait for the cache,
// then reads that never leave the process.
func Example() {
	srv := mustServe(pod("shop", "web-2", nil), pod("shop", "web-1", nil))
	defer srv.Close()

	factory := informer.NewFactory(rest.Config{Host: srv.URL()}, informer.FactoryOptions{})
	pods, err := informer.For[*corev1.Pod](factory) // every caller shares this one watch
	if err != nil {
		log.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	factory.Start(ctx)
	defer factory.Shutdown() // stops every informer and waits for its goroutines

	// Until the cache has synced, reads answer as if the cluster were empty.
	if synced := factory.WaitForCacheSync(ctx); !synced["pods"] {
		log.Fatal("pods did not sync")
	}
	keys := pods.Indexer().ListKeys() // the in-memory cache: no request is made
	slices.Sort(keys)                 // the cache has no order
	fmt.Println(keys)
	// Output: [shop/web-1 shop/web-2]
}

// Handlers enqueue keys; workers do the work. EnqueueKeys is the handler: it
// puts "namespace/name" on a work queue for every add, update and delete (on
// delete the object is always a *corev1.Pod, even when the informer missed
// the deletion: no tombstone to unwrap). A worker takes the key, reads the
// latest state from the lister, and finds a deleted object gone.
func ExampleSharedInformer_AddEventHandler() {
	srv := mustServe(pod("shop", "web-1", nil))
	defer srv.Close()

	factory := informer.NewFactory(rest.Config{Host: srv.URL()}, informer.FactoryOptions{})
	pods, err := informer.For[*corev1.Pod](factory)
	if err != nil {
		log.Fatal(err)
	}
	var queue workqueue.Queue[string]
	defer queue.ShutDown()
	reg, err := pods.AddEventHandler(informer.EnqueueKeys[*corev1.Pod](&queue), informer.HandlerOptions{Name: "enqueue"})
	if err != nil {
		log.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	factory.Start(ctx)
	defer factory.Shutdown()
	// A registration syncs once its handler has seen the initial state.
	if !informer.WaitForCacheSync(ctx, reg) {
		log.Fatal("handler did not sync")
	}
	work := func() {
		key, _ := queue.Get()
		defer queue.Done(key)
		namespace, name, err := informer.SplitKey(key)
		if err != nil {
			return // a key no retry can fix
		}
		if _, err := pods.Lister().Namespace(namespace).Get(name); apierrors.IsNotFound(err) {
			fmt.Println(key, "is gone: clean up")
			return
		}
		fmt.Println(key, "exists: reconcile")
	}
	work()

	if err := srv.Delete(pod("shop", "web-1", nil)); err != nil {
		log.Fatal(err)
	}
	work()
	// Output:
	// shop/web-1 exists: reconcile
	// shop/web-1 is gone: clean up
}

// A factory scoped to one namespace and one label: the API server filters,
// so the cache, and every lister of this factory, holds only what matches.
func ExampleFactoryOptions_scoped() {
	srv := mustServe(
		pod("shop", "web-1", map[string]string{"app": "web"}),
		pod("shop", "db-1", map[string]string{"app": "db"}),
		pod("blog", "web-1", map[string]string{"app": "web"}),
	)
	defer srv.Close()

	factory := informer.NewFactory(rest.Config{Host: srv.URL()}, informer.FactoryOptions{
		Namespace:     "shop",
		LabelSelector: "app=web",
	})
	pods, err := informer.For[*corev1.Pod](factory)
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	factory.Start(ctx)
	defer factory.Shutdown()
	factory.WaitForCacheSync(ctx)

	all, err := pods.Lister().List(labels.Everything())
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range all {
		fmt.Println(p.Namespace + "/" + p.Name)
	}
	// Output: shop/web-1
}

// Read from the lister, write through the client. The lister returns the
// cache's own object, shared with every other reader: DeepCopy it, change
// the copy, and write it to the API server over HTTP. If another writer got
// there first the server answers Conflict, and RetryOnConflict reads again
// and re-applies the change. The cache catches up from the watch.
func ExampleSharedInformer_Lister() {
	srv := mustServe(pod("shop", "web-1", nil))
	defer srv.Close()
	cfg := rest.Config{Host: srv.URL()}

	factory := informer.NewFactory(cfg, informer.FactoryOptions{})
	pods, err := informer.For[*corev1.Pod](factory)
	if err != nil {
		log.Fatal(err)
	}
	writer, err := client.New(cfg, client.Options{})
	if err != nil {
		log.Fatal(err)
	}
	podClient, err := client.For[*corev1.Pod](writer)
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	factory.Start(ctx)
	defer factory.Shutdown()
	factory.WaitForCacheSync(ctx)

	// Someone else changes the pod after our cache read it: our first write
	// carries a stale resourceVersion.
	stale, _ := pods.Lister().Namespace("shop").Get("web-1")
	other := stale.DeepCopy()
	other.Labels = map[string]string{"tier": "front"}
	if _, err := podClient.Update(ctx, other, metav1.UpdateOptions{}); err != nil {
		log.Fatal(err)
	}

	tries := 0
	var cached *corev1.Pod
	err = client.RetryOnConflict(ctx, client.DefaultRetry, func() error {
		tries++
		if tries == 1 {
			cached = stale // the lister's answer a moment ago
		} else if cached, err = podClient.Get(ctx, "shop", "web-1", metav1.GetOptions{}); err != nil {
			return err // a fresh read after a conflict
		}
		p := cached.DeepCopy() // never write through the cached pointer
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations["checked-by"] = "inventory-controller"
		_, err := podClient.Update(ctx, p, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	final, _ := podClient.Get(ctx, "shop", "web-1", metav1.GetOptions{})
	fmt.Println("tries:", tries)
	fmt.Println("server has:", final.Annotations["checked-by"], final.Labels["tier"])
	fmt.Println("the object we read is unchanged:", stale.Annotations["checked-by"] == "")
	// Output:
	// tries: 2
	// server has: inventory-controller front
	// the object we read is unchanged: true
}

// One factory serves any number of types, each with its own single watch.
func ExampleFor() {
	srv := mustServe(
		pod("shop", "web-1", nil),
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}},
	)
	defer srv.Close()

	factory := informer.NewFactory(rest.Config{Host: srv.URL()}, informer.FactoryOptions{})
	deployments, err := informer.For[*appsv1.Deployment](factory)
	if err != nil {
		log.Fatal(err)
	}
	services, err := informer.For[*corev1.Service](factory)
	if err != nil {
		log.Fatal(err)
	}
	pods, err := informer.For[*corev1.Pod](factory)
	if err != nil {
		log.Fatal(err)
	}
	again, _ := informer.For[*corev1.Pod](factory)
	fmt.Println("same pod informer:", again == pods)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	factory.Start(ctx)
	defer factory.Shutdown()
	synced := factory.WaitForCacheSync(ctx)
	fmt.Println("synced:", synced["deployments.apps"], synced["services"], synced["pods"])
	fmt.Println(deployments.Indexer().ListKeys(), services.Indexer().ListKeys(), pods.Indexer().ListKeys())
	// Output:
	// same pod informer: true
	// synced: true true true
	// [shop/web] [shop/web] [shop/web-1]
}

// A controller that only needs to know which pods a ReplicaSet owns does not
// need their specs: a metadata-only informer asks the server for
// PartialObjectMetadata, so the spec and status never cross the wire and never
// sit in the cache. It works for any resource, including ones whose Go types
// the program does not have.
func ExampleForMetadata() {
	owned := pod("shop", "web-1", map[string]string{"app": "web"})
	controller := true
	owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d9f", UID: "rs-1", Controller: &controller}}
	owned.Spec.Containers = []corev1.Container{{Name: "main", Image: "registry.example/web:1.0"}}
	srv := mustServe(owned)
	defer srv.Close()

	factory := informer.NewFactory(rest.Config{Host: srv.URL()}, informer.FactoryOptions{})
	metas, err := informer.ForMetadata(factory, corev1.SchemeGroupVersion.WithResource("pods"), false)
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	factory.Start(ctx)
	defer factory.Shutdown()
	if !informer.WaitForCacheSync(ctx, metas) {
		log.Fatal("not synced")
	}

	m, err := metas.Lister().Namespace("shop").Get("web-1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%T %s/%s app=%s\n", m, m.Namespace, m.Name, m.Labels["app"])
	if owner := metav1.GetControllerOfNoCopy(m); owner != nil {
		fmt.Println("controlled by", owner.Kind, owner.Name)
	}
	// Output:
	// *v1.PartialObjectMetadata shop/web-1 app=web
	// controlled by ReplicaSet web-7d9f
}

// managedFields, the server-side-apply bookkeeping, is a large share of every
// object's bytes and almost no controller reads it. StripManagedFields drops
// it before the object is cached, once per object, for every informer of the
// factory.
func ExampleStripManagedFields() {
	p := pod("shop", "web-1", nil)
	p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}
	srv := mustServe(p)
	defer srv.Close()

	factory := informer.NewFactory(rest.Config{Host: srv.URL()}, informer.FactoryOptions{
		Informer: informer.Options{Transform: informer.StripManagedFields()},
	})
	pods, err := informer.For[*corev1.Pod](factory)
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	factory.Start(ctx)
	defer factory.Shutdown()
	if !informer.WaitForCacheSync(ctx, pods) {
		log.Fatal("not synced")
	}

	cached, err := pods.Lister().Namespace("shop").Get("web-1")
	if err != nil {
		log.Fatal(err)
	}
	stored, err := srv.Objects(corev1.SchemeGroupVersion.WithResource("pods"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("on the server:", len(stored[0].(*corev1.Pod).ManagedFields), "managedFields entry")
	fmt.Println("in the cache: ", len(cached.ManagedFields), "managedFields entries")
	// Output:
	// on the server: 1 managedFields entry
	// in the cache:  0 managedFields entries
}
