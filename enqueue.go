package informer

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer/workqueue"
)

// EnqueueKeys returns the handler every controller starts with: each add,
// update and delete puts the object's key (KeyOf) on q, and the workers do
// the work. Deletes are keys like any other (OnDelete always receives a T,
// so there is no tombstone to unwrap): the worker finds the object gone from
// the lister and cleans up.
//
// The adds of the initial list go in at workqueue.PriorityLow, so that after
// a restart a live change is handled before the objects that merely exist.
//
//	reg, err := pods.AddEventHandler(informer.EnqueueKeys[*corev1.Pod](queue), informer.HandlerOptions{})
func EnqueueKeys[T runtime.Object](q *workqueue.Queue[string]) Handler[T] {
	add := func(obj T, p workqueue.Priority) {
		// Only an object without metadata has no key, and the cache holds
		// none such: there is nothing to enqueue.
		if key, err := KeyOf(obj); err == nil {
			q.AddWithPriority(key, p)
		}
	}
	return Handler[T]{
		OnAdd: func(obj T, inInitialList bool) {
			if inInitialList {
				add(obj, workqueue.PriorityLow)
				return
			}
			add(obj, workqueue.PriorityNormal)
		},
		OnUpdate: func(_, obj T) { add(obj, workqueue.PriorityNormal) },
		OnDelete: func(obj T, _ bool) { add(obj, workqueue.PriorityNormal) },
	}
}

// EnqueueOwner returns a handler that enqueues the controlling owner of
// each object, not the object: a ReplicaSet controller watches its Pods
// this way, and a change to a Pod wakes the ReplicaSet that owns it. The
// owner is the object's ownerReference with controller: true, when its
// group and kind are owner's (any version); an object without one is
// ignored. owner's scope decides the key: "namespace/name" with the
// object's namespace (an owner is always in its dependent's namespace, or
// cluster-scoped), or the name alone for a cluster-scoped owner.
//
// An update whose owner changed (adopted, released) enqueues both owners,
// so the old one notices its loss.
//
//	rs := apiresource.Guess(appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))
//	pods.AddEventHandler(informer.EnqueueOwner[*corev1.Pod](queue, rs), informer.HandlerOptions{})
func EnqueueOwner[T runtime.Object](q *workqueue.Queue[string], owner Resource) Handler[T] {
	add := func(obj T) {
		if key, ok := ownerKey(obj, owner); ok {
			q.Add(key)
		}
	}
	return Handler[T]{
		OnAdd: func(obj T, _ bool) { add(obj) },
		OnUpdate: func(old, obj T) {
			oldKey, hadOwner := ownerKey(old, owner)
			if key, ok := ownerKey(obj, owner); ok {
				q.Add(key)
				if hadOwner && oldKey == key {
					return
				}
			}
			if hadOwner {
				q.Add(oldKey)
			}
		},
		OnDelete: func(obj T, _ bool) { add(obj) },
	}
}

// ownerKey is the key of obj's controlling owner when it is of owner's
// group and kind.
func ownerKey(obj runtime.Object, owner Resource) (string, bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", false
	}
	ref := metav1.GetControllerOfNoCopy(m)
	if ref == nil || ref.Kind != owner.Kind.Kind || ref.Name == "" {
		return "", false
	}
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != owner.Kind.Group {
		return "", false
	}
	if owner.ClusterScoped || m.GetNamespace() == "" {
		return ref.Name, true
	}
	return m.GetNamespace() + "/" + ref.Name, true
}

// EnqueueMapped returns a handler that enqueues the keys keys maps each
// object to: for a controller whose objects are named by others, such as
// the Services a ConfigMap is mounted by, or an index lookup. An update
// enqueues the keys of the old and the new object, so that a key the
// object no longer maps to still hears of the change. The queue
// deduplicates the keys.
//
//	informer.EnqueueMapped(queue, func(cm *corev1.ConfigMap) []string {
//		return []string{cm.Namespace + "/" + cm.Labels["app"]}
//	})
func EnqueueMapped[T runtime.Object](q *workqueue.Queue[string], keys func(T) []string) Handler[T] {
	add := func(obj T) {
		for _, key := range keys(obj) {
			q.Add(key)
		}
	}
	return Handler[T]{
		OnAdd:    func(obj T, _ bool) { add(obj) },
		OnUpdate: func(old, obj T) { add(old); add(obj) },
		OnDelete: func(obj T, _ bool) { add(obj) },
	}
}
