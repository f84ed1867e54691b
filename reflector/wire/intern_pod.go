package wire

// The pod walker of the interning in intern.go: which of a pod's strings
// repeat across pods. Delete it with intern.go.

import corev1 "k8s.io/api/core/v1"

func (in interner) podSpec(s *corev1.PodSpec) {
	for i := range s.Volumes {
		v := &s.Volumes[i]
		str(in, &v.Name)
		if v.ConfigMap != nil {
			str(in, &v.ConfigMap.Name)
		}
		if v.Secret != nil {
			str(in, &v.Secret.SecretName)
		}
	}
	for i := range s.InitContainers {
		in.container(&s.InitContainers[i])
	}
	for i := range s.Containers {
		in.container(&s.Containers[i])
	}
	str(in, &s.RestartPolicy)
	str(in, &s.DNSPolicy)
	str(in, &s.ServiceAccountName)
	str(in, &s.DeprecatedServiceAccount)
	str(in, &s.NodeName)
	str(in, &s.SchedulerName)
	str(in, &s.PriorityClassName)
	in.stringMap(s.NodeSelector)
	for i := range s.Tolerations {
		t := &s.Tolerations[i]
		str(in, &t.Key)
		str(in, &t.Operator)
		str(in, &t.Value)
		str(in, &t.Effect)
	}
}

func (in interner) container(c *corev1.Container) {
	str(in, &c.Name)
	str(in, &c.Image)
	strs(in, c.Command)
	strs(in, c.Args)
	str(in, &c.WorkingDir)
	for i := range c.Ports {
		str(in, &c.Ports[i].Name)
		str(in, &c.Ports[i].Protocol)
	}
	for i := range c.Env {
		e := &c.Env[i]
		str(in, &e.Name)
		str(in, &e.Value)
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			str(in, &e.ValueFrom.FieldRef.APIVersion)
			str(in, &e.ValueFrom.FieldRef.FieldPath)
		}
	}
	for i := range c.VolumeMounts {
		str(in, &c.VolumeMounts[i].Name)
		str(in, &c.VolumeMounts[i].MountPath)
	}
	in.probe(c.LivenessProbe)
	in.probe(c.ReadinessProbe)
	in.probe(c.StartupProbe)
	str(in, &c.TerminationMessagePath)
	str(in, &c.TerminationMessagePolicy)
	str(in, &c.ImagePullPolicy)
}

func (in interner) probe(p *corev1.Probe) {
	if p == nil || p.HTTPGet == nil {
		return
	}
	str(in, &p.HTTPGet.Path)
	str(in, &p.HTTPGet.Port.StrVal)
	str(in, &p.HTTPGet.Scheme)
}

func (in interner) podStatus(s *corev1.PodStatus) {
	str(in, &s.Phase)
	for i := range s.Conditions {
		c := &s.Conditions[i]
		str(in, &c.Type)
		str(in, &c.Status)
		str(in, &c.Reason)
		str(in, &c.Message)
	}
	str(in, &s.HostIP)
	for i := range s.HostIPs {
		str(in, &s.HostIPs[i].IP)
	}
	str(in, &s.NominatedNodeName)
	str(in, &s.QOSClass)
	str(in, &s.Reason)
	for i := range s.InitContainerStatuses {
		in.containerStatus(&s.InitContainerStatuses[i])
	}
	for i := range s.ContainerStatuses {
		in.containerStatus(&s.ContainerStatuses[i])
	}
}

func (in interner) containerStatus(c *corev1.ContainerStatus) {
	str(in, &c.Name)
	str(in, &c.Image)
	str(in, &c.ImageID)
	if w := c.State.Waiting; w != nil {
		str(in, &w.Reason)
	}
	if t := c.State.Terminated; t != nil {
		str(in, &t.Reason)
	}
	if t := c.LastTerminationState.Terminated; t != nil {
		str(in, &t.Reason)
	}
}
