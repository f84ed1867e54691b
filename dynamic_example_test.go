package informer_test

import (
	"context"
	"fmt"
	"log"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/client"
	"github.com/seed31a95821/informer/rest"
)

// Watching a custom resource that has no Go type: the CRD is created while
// the program runs, ForDynamic finds its kind and scope through the
// server's discovery, and the dynamic client writes its objects. Numbers
// come back as apimachinery decodes them: integers as int64.
func ExampleForDynamic() {
	srv := mustServe()
	defer srv.Close()
	cfg := rest.Config{Host: srv.URL()}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	c, err := client.New(cfg, client.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.CloseIdleConnections()
	crds, err := client.ForDynamic(ctx, c, schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	if err != nil {
		log.Fatal(err)
	}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "gadgets.example.com"},
		"spec": map[string]any{
			"group": "example.com", "scope": "Namespaced",
			"names": map[string]any{"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}}
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		log.Fatal(err)
	}

	gadgetsGVR := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}
	gadgets, err := client.ForDynamic(ctx, c, gadgetsGVR)
	if err != nil {
		log.Fatal(err)
	}
	_, err = gadgets.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Gadget",
		"metadata": map[string]any{"namespace": "default", "name": "g1"},
		"spec":     map[string]any{"replicas": int64(3)},
	}}, metav1.CreateOptions{})
	if err != nil {
		log.Fatal(err)
	}

	factory := informer.NewFactory(cfg, informer.FactoryOptions{})
	defer factory.Shutdown()
	inf, err := informer.ForDynamic(factory, gadgetsGVR)
	if err != nil {
		log.Fatal(err)
	}
	factory.Start(ctx)
	fmt.Println(factory.WaitForCacheSync(ctx))

	g1, err := inf.Lister().Get("default", "g1")
	if err != nil {
		log.Fatal(err)
	}
	replicas, _, _ := unstructured.NestedFieldNoCopy(g1.Object, "spec", "replicas")
	fmt.Printf("%s %s: replicas %v (%T)\n", g1.GetKind(), g1.GetName(), replicas, replicas)
	// Output:
	// map[gadgets.example.com (dynamic):true]
	// Gadget g1: replicas 3 (int64)
}
