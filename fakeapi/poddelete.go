package fakeapi

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// A pod is not deleted the way other objects are. kube-apiserver first
// writes the pod's deletionTimestamp and deletionGracePeriodSeconds (a
// MODIFIED event: "terminating"), and removes the pod (DELETED) only when
// the grace period is zero: at once for a pod that was never scheduled or
// has finished, or for a delete with gracePeriodSeconds=0; otherwise when
// the pod's kubelet, having stopped the containers, deletes it again with
// a zero grace period. Controllers see the first step and react to it
// (a ReplicaSet counts a terminating pod as gone).
//
// fakeapi has no kubelet, so it plays the kubelet's part at once: an HTTP
// DELETE of a pod writes the deletionTimestamp, then removes the pod, in
// one critical section. Clients see the real sequence of events; only the
// wait in between is missing. (Server.Delete, the Go API, removes the pod
// in one step.)

var podKind = corev1.SchemeGroupVersion.WithKind("Pod")

// defaultPodGracePeriod is terminationGracePeriodSeconds' default.
const defaultPodGracePeriod = 30

// deletePod deletes a pod in the real server's two steps and returns its
// final state.
func (s *store) deletePod(ri *resourceInfo, namespace, name string, pre preconditions, grace *int64) (runtime.Object, error) {
	key := objectKey(ri, namespace, name)
	old, ok := s.bucket(ri).objects[key]
	if !ok {
		return nil, apierrors.NewNotFound(ri.groupResource(), name)
	}
	oldMeta, err := meta.Accessor(old)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if err := pre.check(ri, oldMeta); err != nil {
		return nil, err
	}
	if len(oldMeta.GetFinalizers()) > 0 {
		marked, _ := s.markDeleting(ri, key, old)
		return marked, nil
	}
	if oldMeta.GetDeletionTimestamp() == nil {
		marked := old.DeepCopyObject()
		m, _ := meta.Accessor(marked)
		period := podGracePeriod(old, grace)
		at := metav1.NewTime(s.now().Add(time.Duration(period) * time.Second))
		m.SetDeletionTimestamp(&at)
		m.SetDeletionGracePeriodSeconds(&period)
		m.SetGeneration(oldMeta.GetGeneration() + 1)
		s.commit(ri, key, watch.Modified, marked, old)
	}
	// The preconditions held for the object the client meant; the marking
	// above changed its resourceVersion, so they are not checked again.
	return s.delete(ri, namespace, name, preconditions{})
}

// podGracePeriod is the real pod strategy's grace period: the request's,
// else the pod's terminationGracePeriodSeconds (30 by default), and zero
// for a pod that was never scheduled or has finished.
func podGracePeriod(obj runtime.Object, requested *int64) int64 {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return 0
	}
	period := int64(defaultPodGracePeriod)
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		period = *pod.Spec.TerminationGracePeriodSeconds
	}
	if requested != nil {
		period = *requested
	}
	if pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		period = 0
	}
	return period
}
