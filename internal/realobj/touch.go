package realobj

import (
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Touch changes obj as one write of a churn does, and returns it: a node's
// heartbeat, a workload's status as its controller observes it again, an
// annotation a controller stamps on the others. Every write sets
// RoundAnnotation to round, for a test to tell when a cache has seen them
// all.
func Touch(obj runtime.Object, round int) runtime.Object {
	at := metav1.NewTime(epoch.Add(time.Duration(round+1) * time.Hour))
	switch o := obj.(type) {
	case *corev1.Node:
		for i := range o.Status.Conditions {
			o.Status.Conditions[i].LastHeartbeatTime = at
		}
	case *appsv1.Deployment:
		o.Status.ObservedGeneration += int64(round + 1)
	case *appsv1.ReplicaSet:
		o.Status.ObservedGeneration += int64(round + 1)
	}
	if m, err := meta.Accessor(obj); err == nil {
		a := m.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[RoundAnnotation] = strconv.Itoa(round)
		a["bench.informer/written"] = at.Format(time.RFC3339Nano) + "/" + m.GetName()
		m.SetAnnotations(a)
	}
	return obj
}
