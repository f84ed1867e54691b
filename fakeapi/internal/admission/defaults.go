package admission

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The real server's defaults for the kinds kubectl users create most:
// pods and the workloads that hold pod templates. Clients read them back
// (kubectl get shows a pod's phase and restart policy), selectors match on
// them (status.phase=Pending), and kubectl apply's three-way merge expects
// them to be there. Each value is the one kube-apiserver v1.37 stores.

// Default fills in what the real decoder defaults, for the kinds that
// have defaults worth reproducing. It changes obj in place.
func Default(obj runtime.Object) {
	switch o := obj.(type) {
	case *corev1.Pod:
		defaultPodSpec(&o.Spec)
		defaultRequestsFromLimits(o.Spec.Containers)
		defaultRequestsFromLimits(o.Spec.InitContainers)
		if o.Spec.EnableServiceLinks == nil {
			o.Spec.EnableServiceLinks = ptrTo(corev1.DefaultEnableServiceLinks)
		}
	case *appsv1.Deployment:
		defaultDeployment(o)
	case *appsv1.ReplicaSet:
		defaultReplicas(&o.Spec.Replicas)
		defaultPodSpec(&o.Spec.Template.Spec)
	case *appsv1.StatefulSet:
		defaultStatefulSet(o)
	case *appsv1.DaemonSet:
		defaultDaemonSet(o)
	case *corev1.Service:
		defaultService(o)
	}
}

func ptrTo[T any](v T) *T { return &v }

func defaultPodSpec(spec *corev1.PodSpec) {
	if spec.ServiceAccountName == "" {
		spec.ServiceAccountName = spec.DeprecatedServiceAccount
	}
	spec.DeprecatedServiceAccount = spec.ServiceAccountName
	if spec.DNSPolicy == "" {
		spec.DNSPolicy = corev1.DNSClusterFirst
	}
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = corev1.RestartPolicyAlways
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	if spec.TerminationGracePeriodSeconds == nil {
		spec.TerminationGracePeriodSeconds = ptrTo(int64(corev1.DefaultTerminationGracePeriodSeconds))
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = corev1.DefaultSchedulerName
	}
	for i := range spec.Containers {
		defaultContainer(&spec.Containers[i])
	}
	for i := range spec.InitContainers {
		defaultContainer(&spec.InitContainers[i])
	}
}

// defaultContainer: images tagged latest (or not tagged, which means
// latest) are pulled always, others if not present.
func defaultContainer(c *corev1.Container) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = corev1.PullIfNotPresent
		if imageTag(c.Image) == "latest" {
			c.ImagePullPolicy = corev1.PullAlways
		}
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = corev1.ProtocolTCP
		}
	}
}

// imageTag is the tag of an image reference: "latest" when it has none
// (and no digest).
func imageTag(image string) string {
	if strings.Contains(image, "@") {
		return ""
	}
	name := image[strings.LastIndex(image, "/")+1:]
	if _, tag, ok := strings.Cut(name, ":"); ok {
		return tag
	}
	return "latest"
}

// defaultRequestsFromLimits: a pod's container with limits but no requests
// requests its limits (for pods only, not for templates).
func defaultRequestsFromLimits(containers []corev1.Container) {
	for i := range containers {
		r := &containers[i].Resources
		for name, limit := range r.Limits {
			if r.Requests == nil {
				r.Requests = corev1.ResourceList{}
			}
			if _, ok := r.Requests[name]; !ok {
				r.Requests[name] = limit.DeepCopy()
			}
		}
	}
}

func defaultReplicas(replicas **int32) {
	if *replicas == nil {
		*replicas = ptrTo(int32(1))
	}
}

func defaultDeployment(d *appsv1.Deployment) {
	defaultReplicas(&d.Spec.Replicas)
	s := &d.Spec.Strategy
	if s.Type == "" {
		s.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if s.Type == appsv1.RollingUpdateDeploymentStrategyType {
		if s.RollingUpdate == nil {
			s.RollingUpdate = &appsv1.RollingUpdateDeployment{}
		}
		quarter := intstr.FromString("25%")
		if s.RollingUpdate.MaxUnavailable == nil {
			s.RollingUpdate.MaxUnavailable = ptrTo(quarter)
		}
		if s.RollingUpdate.MaxSurge == nil {
			s.RollingUpdate.MaxSurge = ptrTo(quarter)
		}
	}
	if d.Spec.RevisionHistoryLimit == nil {
		d.Spec.RevisionHistoryLimit = ptrTo(int32(10))
	}
	if d.Spec.ProgressDeadlineSeconds == nil {
		d.Spec.ProgressDeadlineSeconds = ptrTo(int32(600))
	}
	defaultPodSpec(&d.Spec.Template.Spec)
}

func defaultStatefulSet(s *appsv1.StatefulSet) {
	defaultReplicas(&s.Spec.Replicas)
	if s.Spec.PodManagementPolicy == "" {
		s.Spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	if s.Spec.UpdateStrategy.Type == "" {
		s.Spec.UpdateStrategy.Type = appsv1.RollingUpdateStatefulSetStrategyType
	}
	if s.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType {
		if s.Spec.UpdateStrategy.RollingUpdate == nil {
			s.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
		}
		if s.Spec.UpdateStrategy.RollingUpdate.Partition == nil {
			s.Spec.UpdateStrategy.RollingUpdate.Partition = ptrTo(int32(0))
		}
	}
	if s.Spec.RevisionHistoryLimit == nil {
		s.Spec.RevisionHistoryLimit = ptrTo(int32(10))
	}
	if s.Spec.PersistentVolumeClaimRetentionPolicy == nil {
		s.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
	}
	p := s.Spec.PersistentVolumeClaimRetentionPolicy
	if p.WhenDeleted == "" {
		p.WhenDeleted = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if p.WhenScaled == "" {
		p.WhenScaled = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	defaultPodSpec(&s.Spec.Template.Spec)
}

func defaultDaemonSet(d *appsv1.DaemonSet) {
	u := &d.Spec.UpdateStrategy
	if u.Type == "" {
		u.Type = appsv1.RollingUpdateDaemonSetStrategyType
	}
	if u.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if u.RollingUpdate == nil {
			u.RollingUpdate = &appsv1.RollingUpdateDaemonSet{}
		}
		if u.RollingUpdate.MaxUnavailable == nil {
			u.RollingUpdate.MaxUnavailable = ptrTo(intstr.FromInt32(1))
		}
		if u.RollingUpdate.MaxSurge == nil {
			u.RollingUpdate.MaxSurge = ptrTo(intstr.FromInt32(0))
		}
	}
	if d.Spec.RevisionHistoryLimit == nil {
		d.Spec.RevisionHistoryLimit = ptrTo(int32(10))
	}
	defaultPodSpec(&d.Spec.Template.Spec)
}

func defaultService(svc *corev1.Service) {
	if svc.Spec.Type == "" {
		svc.Spec.Type = corev1.ServiceTypeClusterIP
	}
	if svc.Spec.SessionAffinity == "" {
		svc.Spec.SessionAffinity = corev1.ServiceAffinityNone
	}
	for i := range svc.Spec.Ports {
		p := &svc.Spec.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if p.TargetPort == (intstr.IntOrString{}) {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
	if svc.Spec.Type != corev1.ServiceTypeExternalName && svc.Spec.InternalTrafficPolicy == nil {
		svc.Spec.InternalTrafficPolicy = ptrTo(corev1.ServiceInternalTrafficPolicyCluster)
	}
}

// PrepareForCreate applies the create rules of the real strategies and
// default admission plugins to a defaulted object sent by a client.
func PrepareForCreate(obj runtime.Object) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	// The status of a new pod is the server's: Pending, with its QoS
	// class, whatever the client sent.
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending, QOSClass: podQOS(&pod.Spec)}
	// The Priority plugin: no priorityClassName means priority 0.
	if pod.Spec.Priority == nil && pod.Spec.PriorityClassName == "" {
		pod.Spec.Priority = ptrTo(int32(0))
	}
	if pod.Spec.PreemptionPolicy == nil {
		pod.Spec.PreemptionPolicy = ptrTo(corev1.PreemptLowerPriority)
	}
	addDefaultTolerations(&pod.Spec)
}

// addDefaultTolerations is the DefaultTolerationSeconds plugin: a pod
// tolerates a not-ready or unreachable node for five minutes unless it
// says otherwise.
func addDefaultTolerations(spec *corev1.PodSpec) {
	for _, key := range []string{corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable} {
		has := false
		for _, t := range spec.Tolerations {
			if (t.Key == key || t.Key == "") && (t.Effect == corev1.TaintEffectNoExecute || t.Effect == "") {
				has = true
			}
		}
		if !has {
			spec.Tolerations = append(spec.Tolerations, corev1.Toleration{Key: key,
				Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptrTo(int64(300))})
		}
	}
}

// podQOS is the pod's quality-of-service class: BestEffort with no CPU or
// memory requests or limits at all, Guaranteed when every container limits
// both and requests what it limits, Burstable otherwise.
func podQOS(spec *corev1.PodSpec) corev1.PodQOSClass {
	containers := append(append([]corev1.Container(nil), spec.Containers...), spec.InitContainers...)
	any, guaranteed := false, true
	for _, c := range containers {
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			req, hasReq := c.Resources.Requests[name]
			limit, hasLimit := c.Resources.Limits[name]
			any = any || hasReq || hasLimit
			if !hasLimit || (hasReq && !equality.Semantic.DeepEqual(req, limit)) {
				guaranteed = false
			}
		}
	}
	switch {
	case !any:
		return corev1.PodQOSBestEffort
	case guaranteed:
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}

// DefaultIPFamilies gives a Service with a cluster IP the IP family of its
// (IPv4) address and the single-stack policy, when the client set neither.
func DefaultIPFamilies(svc *corev1.Service) {
	if len(svc.Spec.IPFamilies) == 0 {
		svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	}
	if svc.Spec.IPFamilyPolicy == nil {
		svc.Spec.IPFamilyPolicy = ptrTo(corev1.IPFamilyPolicySingleStack)
	}
}
