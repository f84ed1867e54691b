package share

// The walkers of the kinds besides pods that clusters hold many of. What
// repeats: a ConfigMap or Secret copied into every namespace (each
// namespace's kube-root-ca.crt, image pull secrets, a service account
// token's ca.crt), the templates of Deployments and ReplicaSets (a
// ReplicaSet per rollout, each with its Deployment's template), and a node
// pool's labels, capacity, taints, images and versions.

import (
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

func (w walker) configMap(c *corev1.ConfigMap) {
	w.meta(&c.ObjectMeta)
	w.stringMap(&c.Data)
	w.bytesMap(&c.BinaryData)
}

// secret shares a Secret's data only with data equal byte for byte, as
// every value here: a whole map first, else each value (a service account
// token's ca.crt is every namespace's).
func (w walker) secret(s *corev1.Secret) {
	w.meta(&s.ObjectMeta)
	str(w, &s.Type)
	if !w.values {
		w.bytesMap(&s.Data)
		return
	}
	kept := w.t.bytesMap(s.Data)
	if len(kept) > 0 && reflect.ValueOf(kept).UnsafePointer() == reflect.ValueOf(s.Data).UnsafePointer() {
		for k, v := range kept {
			kept[k] = w.t.bytes(v)
		}
	}
	s.Data = kept
}

func (w walker) deployment(d *appsv1.Deployment) {
	w.meta(&d.ObjectMeta)
	w.labelSelector(d.Spec.Selector)
	w.podTemplate(&d.Spec.Template)
	str(w, &d.Spec.Strategy.Type)
	w.workloadConditions(d.Status.Conditions)
}

func (w walker) replicaSet(r *appsv1.ReplicaSet) {
	w.meta(&r.ObjectMeta)
	w.labelSelector(r.Spec.Selector)
	w.podTemplate(&r.Spec.Template)
	for i := range r.Status.Conditions {
		c := &r.Status.Conditions[i]
		str(w, &c.Type)
		str(w, &c.Status)
		str(w, &c.Reason)
		str(w, &c.Message)
	}
}

func (w walker) workloadConditions(cs []appsv1.DeploymentCondition) {
	for i := range cs {
		c := &cs[i]
		str(w, &c.Type)
		str(w, &c.Status)
		str(w, &c.Reason)
		str(w, &c.Message)
	}
}

func (w walker) node(n *corev1.Node) {
	w.meta(&n.ObjectMeta)
	if slice(w, sliceTaints, &n.Spec.Taints) {
		for i := range n.Spec.Taints {
			t := &n.Spec.Taints[i]
			str(w, &t.Key)
			str(w, &t.Value)
			str(w, &t.Effect)
		}
	}
	s := &n.Status
	w.resourceList(&s.Capacity)
	w.resourceList(&s.Allocatable)
	str(w, &s.Phase)
	for i := range s.Conditions {
		c := &s.Conditions[i]
		str(w, &c.Type)
		str(w, &c.Status)
		str(w, &c.Reason)
		str(w, &c.Message)
	}
	for i := range s.Addresses {
		str(w, &s.Addresses[i].Type)
	}
	info := &s.NodeInfo
	str(w, &info.KernelVersion)
	str(w, &info.OSImage)
	str(w, &info.ContainerRuntimeVersion)
	str(w, &info.KubeletVersion)
	str(w, &info.KubeProxyVersion)
	str(w, &info.OperatingSystem)
	str(w, &info.Architecture)
	if slice(w, sliceImages, &s.Images) {
		for i := range s.Images {
			strs(w, s.Images[i].Names)
		}
	}
}
