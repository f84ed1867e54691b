package lister_test

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/seed31a95821/informer/indexer"
	"github.com/seed31a95821/informer/lister"
)

// cache builds what an informer would have filled: pods under
// "namespace/name" keys.
func cache() *indexer.Indexer {
	idx := indexer.New(nil)
	for _, p := range []struct{ ns, name, app string }{
		{"shop", "web-1", "web"}, {"shop", "web-2", "web"}, {"shop", "db-1", "db"}, {"lab", "web-1", "web"},
	} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: p.name, Labels: map[string]string{"app": p.app}}}
		_ = idx.Add(p.ns+"/"+p.name, pod)
	}
	return idx
}

func Example() {
	pods := lister.New[*corev1.Pod](cache(), lister.Options{Resource: corev1.Resource("pods")})

	web1, err := pods.Namespace("shop").Get("web-1")
	fmt.Println(web1.Namespace, web1.Name, err)

	_, err = pods.Namespace("shop").Get("web-9")
	fmt.Println(apierrors.IsNotFound(err), err)

	// app=web is answered from the label index: only the three app=web pods
	// are looked at, however many pods the cache holds.
	web, _ := pods.List(labels.SelectorFromSet(labels.Set{"app": "web"}))
	var names []string
	for _, p := range web {
		names = append(names, p.Namespace+"/"+p.Name) // read, never modify
	}
	slices.Sort(names)
	fmt.Println(names)

	inShop, _ := pods.Namespace("shop").List(labels.Everything())
	fmt.Println(len(inShop), "pods in shop")
	// Output:
	// shop web-1 <nil>
	// true pods "web-9" not found
	// [lab/web-1 shop/web-1 shop/web-2]
	// 3 pods in shop
}

// With CopyOnRead every returned object is a private deep copy, which the
// caller may modify without touching the cache.
func ExampleOptions_copyOnRead() {
	idx := cache()
	pods := lister.New[*corev1.Pod](idx, lister.Options{CopyOnRead: true})

	mine, _ := pods.Namespace("shop").Get("web-1")
	mine.Labels["app"] = "mine"

	again, _ := pods.Namespace("shop").Get("web-1")
	fmt.Println(again.Labels["app"])
	// Output:
	// web
}
