package share

// The pod's walker, and the pod template's that workloads reuse: which of a
// pod's values repeat across pods. Pods of one template have equal
// containers, volumes and tolerations: each whole slice is shared, and a
// slice met for the first time still shares its resource lists with other
// templates'.

import corev1 "k8s.io/api/core/v1"

func (w walker) pod(p *corev1.Pod) {
	w.meta(&p.ObjectMeta)
	w.podSpec(&p.Spec)
	w.podStatus(&p.Status)
}

func (w walker) podTemplate(t *corev1.PodTemplateSpec) {
	w.meta(&t.ObjectMeta)
	w.podSpec(&t.Spec)
}

func (w walker) podSpec(s *corev1.PodSpec) {
	if w.values {
		canonicalSizeLimits(s.Volumes)
	}
	if slice(w, sliceVolumes, &s.Volumes) {
		for i := range s.Volumes {
			v := &s.Volumes[i]
			str(w, &v.Name)
			if v.ConfigMap != nil {
				str(w, &v.ConfigMap.Name)
			}
			if v.Secret != nil {
				str(w, &v.Secret.SecretName)
			}
		}
	}
	w.containers(sliceInitContainers, &s.InitContainers)
	w.containers(sliceContainers, &s.Containers)
	str(w, &s.RestartPolicy)
	str(w, &s.DNSPolicy)
	str(w, &s.ServiceAccountName)
	str(w, &s.DeprecatedServiceAccount)
	str(w, &s.NodeName)
	str(w, &s.SchedulerName)
	str(w, &s.PriorityClassName)
	w.stringMap(&s.NodeSelector)
	ptr(w, ptrPodSecurityContext, &s.SecurityContext)
	ptr(w, ptrAffinity, &s.Affinity)
	if slice(w, sliceTolerations, &s.Tolerations) {
		for i := range s.Tolerations {
			t := &s.Tolerations[i]
			str(w, &t.Key)
			str(w, &t.Operator)
			str(w, &t.Value)
			str(w, &t.Effect)
		}
	}
}

func (w walker) containers(kind uint64, cs *[]corev1.Container) {
	if !slice(w, kind, cs) {
		return
	}
	for i := range *cs {
		w.container(&(*cs)[i])
	}
}

func (w walker) container(c *corev1.Container) {
	str(w, &c.Name)
	str(w, &c.Image)
	strs(w, c.Command)
	strs(w, c.Args)
	str(w, &c.WorkingDir)
	for i := range c.Ports {
		str(w, &c.Ports[i].Name)
		str(w, &c.Ports[i].Protocol)
	}
	for i := range c.Env {
		e := &c.Env[i]
		str(w, &e.Name)
		str(w, &e.Value)
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			str(w, &e.ValueFrom.FieldRef.APIVersion)
			str(w, &e.ValueFrom.FieldRef.FieldPath)
		}
	}
	w.resources(&c.Resources)
	for i := range c.VolumeMounts {
		str(w, &c.VolumeMounts[i].Name)
		str(w, &c.VolumeMounts[i].MountPath)
	}
	w.probe(c.LivenessProbe)
	w.probe(c.ReadinessProbe)
	w.probe(c.StartupProbe)
	str(w, &c.TerminationMessagePath)
	str(w, &c.TerminationMessagePolicy)
	str(w, &c.ImagePullPolicy)
}

func (w walker) probe(p *corev1.Probe) {
	if p == nil || p.HTTPGet == nil {
		return
	}
	str(w, &p.HTTPGet.Path)
	str(w, &p.HTTPGet.Port.StrVal)
	str(w, &p.HTTPGet.Scheme)
}

// podStatus holds each pod's own values (times, IPs, container IDs): only
// its strings repeat. Its lists are the pod's own, and a decoder grows
// them by doubling (five conditions take the room of eight): they are
// given their exact size instead.
func (w walker) podStatus(s *corev1.PodStatus) {
	if w.values {
		exact(&s.Conditions)
		exact(&s.ContainerStatuses)
		exact(&s.InitContainerStatuses)
		return
	}
	str(w, &s.Phase)
	for i := range s.Conditions {
		c := &s.Conditions[i]
		str(w, &c.Type)
		str(w, &c.Status)
		str(w, &c.Reason)
		str(w, &c.Message)
	}
	str(w, &s.HostIP)
	for i := range s.HostIPs {
		str(w, &s.HostIPs[i].IP)
	}
	// The pod's own IP, twice: one string (not kept in the table, where
	// it would never meet a twin).
	if len(s.PodIPs) > 0 && s.PodIPs[0].IP == s.PodIP {
		s.PodIPs[0].IP = s.PodIP
	}
	str(w, &s.NominatedNodeName)
	str(w, &s.QOSClass)
	str(w, &s.Reason)
	for i := range s.InitContainerStatuses {
		w.containerStatus(&s.InitContainerStatuses[i])
	}
	for i := range s.ContainerStatuses {
		w.containerStatus(&s.ContainerStatuses[i])
	}
}

func (w walker) containerStatus(c *corev1.ContainerStatus) {
	str(w, &c.Name)
	str(w, &c.Image)
	str(w, &c.ImageID)
	if s := c.State.Waiting; s != nil {
		str(w, &s.Reason)
	}
	if s := c.State.Terminated; s != nil {
		str(w, &s.Reason)
	}
	if s := c.LastTerminationState.Terminated; s != nil {
		str(w, &s.Reason)
	}
}

// canonicalSizeLimits gives each emptyDir's size limit its canonical form
// before the pod is handed on. A Quantity writes that form into itself
// the first time it is printed or marshalled, and the table marshals kept
// values to compare them (render), possibly on another pod's decode while
// a handler reads this one: written here, while the pod is still the
// decoder's own, every later print only reads it. A quantity in a map (a
// ResourceList) is printed as a copy, so only pointers need it. It is the
// whole slice, not what render reaches before maxValue stops it.
func canonicalSizeLimits(vs []corev1.Volume) {
	for i := range vs {
		if d := vs[i].EmptyDir; d != nil && d.SizeLimit != nil {
			_ = d.SizeLimit.String()
		}
	}
}
