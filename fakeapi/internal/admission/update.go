package admission

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// AdmitUpdate defaults and validates a write to an existing object (a PUT
// or a patch of the object, or of its status when subresource is
// "status"), stored being its current state and gk the kind errors name.
// It changes obj in place. The update rules that keep the stored status or
// spec are the caller's (they hold for every write, not only a client's).
func AdmitUpdate(gk schema.GroupKind, obj, stored runtime.Object, subresource string) error {
	Default(obj)
	if subresource == "" {
		keepAssigned(obj, stored)
	}
	if pod, ok := obj.(*corev1.Pod); ok && subresource == "" {
		// The DefaultTolerationSeconds plugin admits updates too.
		addDefaultTolerations(&pod.Spec)
	}
	if err := Validate(gk, obj); err != nil {
		return err
	}
	return validatePodUpdate(gk, obj, stored, subresource)
}

// keepAssigned fills in what the server assigned at create time and an
// update leaves out, as the real server does, so that sending back the
// manifest an object was created from (with its resourceVersion) changes
// nothing, and so is no write at all (fakeapi's TestNoOpUpdateKeepsResourceVersion):
//
//   - a pod keeps the priority and preemption policy the Priority
//     admission plugin gave it;
//   - a Service keeps its cluster IPs, node ports (matched by port name)
//     and health-check node port, as the Service registry patches them in,
//     and gets the IP families of those addresses.
func keepAssigned(obj, stored runtime.Object) {
	switch o := obj.(type) {
	case *corev1.Pod:
		if old, ok := stored.(*corev1.Pod); ok {
			if o.Spec.Priority == nil && old.Spec.Priority != nil {
				o.Spec.Priority = ptrTo(*old.Spec.Priority)
			}
			if o.Spec.PreemptionPolicy == nil && old.Spec.PreemptionPolicy != nil {
				o.Spec.PreemptionPolicy = ptrTo(*old.Spec.PreemptionPolicy)
			}
		}
	case *corev1.Service:
		if old, ok := stored.(*corev1.Service); ok {
			keepServiceAllocations(o, old)
		}
	}
}

// keepServiceAllocations is keepAssigned for a Service.
func keepServiceAllocations(svc, old *corev1.Service) {
	external := corev1.ServiceTypeExternalName
	if svc.Spec.Type != external && old.Spec.Type != external {
		if svc.Spec.ClusterIP == "" {
			svc.Spec.ClusterIP = old.Spec.ClusterIP
		}
		if len(svc.Spec.ClusterIPs) == 0 && len(old.Spec.ClusterIPs) > 0 {
			svc.Spec.ClusterIPs = slices.Clone(old.Spec.ClusterIPs)
		}
		if svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != corev1.ClusterIPNone {
			DefaultIPFamilies(svc)
		}
	}
	if hasNodePorts(svc) && hasNodePorts(old) {
		byName := map[string]int32{}
		for _, p := range old.Spec.Ports {
			byName[p.Name] = p.NodePort
		}
		for i := range svc.Spec.Ports {
			if p := &svc.Spec.Ports[i]; p.NodePort == 0 {
				p.NodePort = byName[p.Name]
			}
		}
	}
	lb := corev1.ServiceTypeLoadBalancer
	if svc.Spec.Type == lb && old.Spec.Type == lb && svc.Spec.HealthCheckNodePort == 0 {
		svc.Spec.HealthCheckNodePort = old.Spec.HealthCheckNodePort
	}
}

func hasNodePorts(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer
}
