package fakeapi

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// What the real server's registry strategies add to an object on its own,
// for every write (Go API included): metadata.generation, and a
// namespace's label, finalizer and phase. The decoder's field defaults and
// the create rules of HTTP writes are in fakeapi/internal/admission and admission.go.
// Each rule was found by the conformance test in integration/
// (docs/fakeapi.md).

// withoutGeneration lists the kinds that have a spec but whose real
// strategies never set metadata.generation.
var withoutGeneration = map[schema.GroupVersionKind]bool{
	corev1.SchemeGroupVersion.WithKind("Service"):   true,
	corev1.SchemeGroupVersion.WithKind("Namespace"): true,
	corev1.SchemeGroupVersion.WithKind("Node"):      true,
}

// tracksGeneration tells whether objects of a kind carry
// metadata.generation: those with a desired state (a Spec field), which
// includes every custom resource, except the core kinds above.
func tracksGeneration(kind schema.GroupVersionKind, sample runtime.Object) bool {
	return hasSpec(sample) && !withoutGeneration[kind]
}

// defaultOnCreate applies the real server's create-time additions.
//
// A namespace gets the label kubernetes.io/metadata.name=<its name>, which
// lets NetworkPolicies and webhooks select namespaces by name; the
// "kubernetes" finalizer in spec.finalizers; and status.phase Active.
func defaultOnCreate(ri *resourceInfo, obj runtime.Object) {
	if ns, ok := obj.(*corev1.Namespace); ok && ri.Kind.Kind == "Namespace" {
		labelNamespace(ns)
		if len(ns.Spec.Finalizers) == 0 {
			ns.Spec.Finalizers = []corev1.FinalizerName{corev1.FinalizerKubernetes}
		}
		ns.Status.Phase = corev1.NamespaceActive
	}
}

// defaultOnUpdate applies the real server's update-time rules: a
// namespace keeps its name label, its finalizers and its status whatever
// the client sent (they are changed through subresources on a real server).
func defaultOnUpdate(ri *resourceInfo, obj, old runtime.Object) {
	ns, ok := obj.(*corev1.Namespace)
	prev, wasNS := old.(*corev1.Namespace)
	if !ok || !wasNS || ri.Kind.Kind != "Namespace" {
		return
	}
	labelNamespace(ns)
	ns.Spec.Finalizers = prev.Spec.Finalizers
	ns.Status = prev.Status
}

func labelNamespace(ns *corev1.Namespace) {
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[corev1.LabelMetadataName] = ns.Name
}

// statusWriteRules applies the real status strategies' exceptions to a
// write to /status (besides the spec, which no /status write can change):
// a pod keeps its owner references, which old kubelets used to corrupt; a
// Deployment keeps its labels.
func statusWriteRules(obj, stored runtime.Object) {
	switch o := obj.(type) {
	case *corev1.Pod:
		if s, ok := stored.(*corev1.Pod); ok {
			o.OwnerReferences = s.DeepCopy().OwnerReferences
		}
	case *appsv1.Deployment:
		if s, ok := stored.(*appsv1.Deployment); ok {
			o.Labels = s.DeepCopy().Labels
		}
	}
}
