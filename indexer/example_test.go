package indexer_test

import (
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer/indexer"
)

func newPod(namespace, name, node string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
		Spec:       corev1.PodSpec{NodeName: node},
	}
}

// byNode files a pod under the node it runs on.
func byNode(obj runtime.Object) ([]string, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("not a pod: %T", obj)
	}
	if p.Spec.NodeName == "" {
		return nil, nil // not scheduled: filed under no node
	}
	return []string{p.Spec.NodeName}, nil
}

func names(objs []runtime.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.(*corev1.Pod).Name)
	}
	slices.Sort(out) // reads come in no particular order
	return out
}

func Example() {
	x := indexer.New(indexer.Indexers{"node": byNode})
	_ = x.Add("shop/web-1", newPod("shop", "web-1", "n1", map[string]string{"app": "web"}))
	_ = x.Add("shop/web-2", newPod("shop", "web-2", "n2", map[string]string{"app": "web"}))
	_ = x.Add("shop/db-1", newPod("shop", "db-1", "n1", map[string]string{"app": "db"}))

	onN1, _ := x.ByIndex("node", "n1")
	fmt.Println("on n1:", names(onN1))

	web, _ := x.ByIndex(indexer.LabelIndex, indexer.LabelIndexValue("app", "web"))
	fmt.Println("app=web:", names(web))

	// web-1 moves to n2: the index follows.
	_ = x.Update("shop/web-1", newPod("shop", "web-1", "n2", map[string]string{"app": "web"}))
	onN1, _ = x.ByIndex("node", "n1")
	fmt.Println("on n1:", names(onN1))

	// The objects returned are the cache's own: never modify them.
	obj, _ := x.Get("shop/web-1")
	fmt.Println("web-1 on", obj.(*corev1.Pod).Spec.NodeName)
	// Output:
	// on n1: [db-1 web-1]
	// app=web: [web-1 web-2]
	// on n1: [db-1]
	// web-1 on n2
}

// Indexes can be added to a store already in use; what is stored is filed
// at once. An index function that fails refuses the write, and nothing
// changes.
func ExampleIndexer_AddIndexers() {
	x := indexer.New(nil)
	_ = x.Add("shop/web-1", newPod("shop", "web-1", "n1", nil))

	if err := x.AddIndexers(indexer.Indexers{"node": byNode}); err != nil {
		fmt.Println(err)
	}
	keys, _ := x.IndexKeys("node", "n1")
	fmt.Println(keys)

	err := x.AddIndexers(indexer.Indexers{"node": byNode})
	fmt.Println(errors.Is(err, indexer.ErrIndexExists))

	err = x.Add("svc", &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc"}})
	var ife *indexer.IndexFuncError
	fmt.Println(errors.As(err, &ife), ife.Index, x.Len())
	// Output:
	// [shop/web-1]
	// true
	// true node 1
}

// Freeze takes a consistent view that later writes do not change, for as
// long as it is kept. Taking it is O(1) and blocks no writer; the writes
// after it copy what they change instead of editing it in place.
func ExampleIndexer_Freeze() {
	x := indexer.New(nil)
	_ = x.Replace(map[string]runtime.Object{
		"shop/web-1": newPod("shop", "web-1", "", nil),
		"shop/web-2": newPod("shop", "web-2", "", nil),
	}, "100")

	snap := x.Freeze()
	_ = x.Delete("shop/web-1")
	x.SetResourceVersion("101")

	fmt.Println("snapshot:", snap.Len(), "objects at", snap.ResourceVersion())
	fmt.Println("now:     ", x.Len(), "object at", x.ResourceVersion())
	n, _ := snap.IndexLen(indexer.NamespaceIndex, "shop")
	fmt.Println("in shop then:", n)
	// Output:
	// snapshot: 2 objects at 100
	// now:      1 object at 101
	// in shop then: 2
}

// Values whose last object left are removed, so the list of values shrinks
// as well as grows.
func ExampleIndexer_ListIndexFuncValues() {
	x := indexer.New(indexer.Indexers{"node": byNode})
	_ = x.Add("shop/web-1", newPod("shop", "web-1", "n1", nil))
	_ = x.Add("shop/web-2", newPod("shop", "web-2", "n2", nil))
	vals := x.ListIndexFuncValues("node")
	slices.Sort(vals)
	fmt.Println(vals)

	_ = x.Delete("shop/web-2")
	fmt.Println(x.ListIndexFuncValues("node"))
	// Output:
	// [n1 n2]
	// [n1]
}

// The recipe for the built-in indexes: every Indexer has NamespaceIndex and
// LabelIndex, with nothing to declare. Their names are taken, so an index
// of one's own needs another name: client-go's habit of declaring
// "namespace" itself is refused with ErrIndexExists.
func ExampleIndexer_ByIndex_builtins() {
	x := indexer.New(nil) // the built-ins need no Indexers
	_ = x.Add("shop/web-1", newPod("shop", "web-1", "n1", map[string]string{"app": "web", "tier": "front"}))
	_ = x.Add("shop/db-1", newPod("shop", "db-1", "n1", map[string]string{"app": "db"}))
	_ = x.Add("blog/web-1", newPod("blog", "web-1", "n2", map[string]string{"app": "web"}))

	// By namespace: the value is the namespace ("" for cluster-scoped).
	inShop, _ := x.ByIndex(indexer.NamespaceIndex, "shop")
	fmt.Println("in shop:", names(inShop))

	// By label: one value per label, spelled by LabelIndexValue. The index
	// is built on its first read, and maintained from then on.
	web, _ := x.IndexKeys(indexer.LabelIndex, indexer.LabelIndexValue("app", "web"))
	slices.Sort(web)
	fmt.Println("app=web:", web)

	// Your own index, beside them: any name but theirs.
	err := indexer.CheckIndexers(indexer.Indexers{indexer.NamespaceIndex: indexer.NamespaceIndexFunc})
	fmt.Println(errors.Is(err, indexer.ErrIndexExists))
	_ = x.AddIndexers(indexer.Indexers{"node": byNode})
	onN1, _ := x.IndexKeys("node", "n1")
	slices.Sort(onN1)
	fmt.Println("on n1:", onN1)
	// Output:
	// in shop: [db-1 web-1]
	// app=web: [blog/web-1 shop/web-1]
	// true
	// on n1: [shop/db-1 shop/web-1]
}
