package main

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer/apiresource"
)

// fooVersion is the Foo CRD's group and version (testdata/crd.yaml).
var fooVersion = schema.GroupVersion{Group: "samplecontroller.k8s.io", Version: "v1alpha1"}

// fooKind is Foo's group, version and kind, as its owner references name it.
var fooKind = fooVersion.WithKind("Foo")

// newScheme is the default scheme (the built-in kinds) with Foo and
// FooList added, for the informers, the client and the recorder.
func newScheme() *runtime.Scheme {
	s := apiresource.NewScheme()
	s.AddKnownTypes(fooVersion, &Foo{}, &FooList{})
	metav1.AddToGroupVersion(s, fooVersion)
	return s
}
