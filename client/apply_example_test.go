package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer/client"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/rest"
)

// Two field managers apply to one ConfigMap: the second one's change to a
// field the first owns is a conflict that names both, until it forces.
func ExampleResource_Apply() {
	srv, err := fakeapi.NewServer(fakeapi.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c, err := client.New(rest.Config{Host: srv.URL()}, client.Options{})
	if err != nil {
		log.Fatal(err)
	}
	cms, err := client.For[*corev1.ConfigMap](c)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	// Only the fields we own: a fresh object, not one read back.
	want := func(colour string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"},
			Data: map[string]string{"colour": colour}}
	}
	if _, err := cms.Apply(ctx, want("blue"), client.ApplyOptions{FieldManager: "alice"}); err != nil {
		log.Fatal(err)
	}
	_, err = cms.Apply(ctx, want("red"), client.ApplyOptions{FieldManager: "bob"})
	var conflict *client.ApplyConflictError
	if errors.As(err, &conflict) {
		for _, f := range conflict.Conflicts {
			fmt.Printf("%s is owned by %s\n", f.Field, f.Manager)
		}
	}
	got, err := cms.Apply(ctx, want("red"), client.ApplyOptions{FieldManager: "bob", Force: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("forced:", got.Data["colour"])
	// Output:
	// .data.colour is owned by alice
	// forced: red
}
