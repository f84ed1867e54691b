package informer

import (
	"k8s.io/apimachinery/pkg/runtime"

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
