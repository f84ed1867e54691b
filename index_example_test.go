package informer_test

import (
	"context"
	"fmt"
	"log"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/indexer"
	"github.com/seed31a95821/informer/rest"
)

// A custom index answers a question the namespace and label indexes cannot:
// here, "which pods run on node-1?". The index function files each pod under
// its spec.nodeName; the cache keeps the index current on every write, so the
// query reads one index entry instead of scanning every pod. Name the index in
// FactoryOptions.Informer.Indexers (or Options.Indexers, or later with
// AddIndexers) and query it through the informer's Indexer.
func ExampleOptions_indexers() {
	onNode := func(name, node string) *corev1.Pod {
		p := pod("shop", name, nil)
		p.Spec.NodeName = node
		return p
	}
	srv := mustServe(onNode("web-1", "node-1"), onNode("web-2", "node-2"), onNode("db-1", "node-1"), pod("shop", "pending", nil))
	defer srv.Close()

	byNode := func(obj runtime.Object) ([]string, error) {
		p, ok := obj.(*corev1.Pod)
		if !ok || p.Spec.NodeName == "" {
			return nil, nil // not scheduled: filed under no node
		}
		return []string{p.Spec.NodeName}, nil
	}
	factory := informer.NewFactory(rest.Config{Host: srv.URL()}, informer.FactoryOptions{
		Informer: informer.Options{Indexers: indexer.Indexers{"byNode": byNode}},
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

	keys, err := pods.Indexer().IndexKeys("byNode", "node-1") // from memory, one index entry
	if err != nil {
		log.Fatal(err)
	}
	slices.Sort(keys)
	fmt.Println("on node-1:", keys)
	fmt.Println("nodes in use:", sorted(pods.Indexer().ListIndexFuncValues("byNode")))
	// Output:
	// on node-1: [shop/db-1 shop/web-1]
	// nodes in use: [node-1 node-2]
}

func sorted(s []string) []string { slices.Sort(s); return s }
