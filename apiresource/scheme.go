package apiresource

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// NewScheme returns a new scheme with the kinds the module knows out of the
// box: core/v1 and apps/v1; coordination.k8s.io/v1, whose Leases carry
// leader election (package leaderelection); autoscaling/v1, whose Scale is
// the scale subresource's object; and meta.k8s.io/v1's PartialObjectMetadata and
// Table, for metadata-only responses, with the request options
// (ListOptions, DeleteOptions...) that clients may label with that group.
// It is the default scheme of the informer's factory, of reflector/wire, of
// package client and of fakeapi. Register your own types into it and pass
// it to each of them.
//
// Each call builds a fresh scheme, which the caller may change; building
// one walks hundreds of types by reflection, so build it once and share it.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	// The registration functions only fail on programmer error (a type
	// registered twice with different names); a panic hides nothing.
	for _, add := range []func(*runtime.Scheme) error{
		metav1.AddMetaToScheme,
		corev1.AddToScheme,
		appsv1.AddToScheme,
		autoscalingv1.AddToScheme,
		coordinationv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(fmt.Sprintf("apiresource: building the default scheme: %v", err))
		}
	}
	s.AddKnownTypes(metav1.SchemeGroupVersion, &metav1.ListOptions{}, &metav1.GetOptions{},
		&metav1.DeleteOptions{}, &metav1.CreateOptions{}, &metav1.UpdateOptions{}, &metav1.PatchOptions{})
	return s
}
