package realpod

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Shape of the population.
const (
	Namespaces = 20  // namespaces the pods spread over
	Replicas   = 10  // pods per deployment
	Nodes      = 100 // nodes the pods are scheduled on
)

// epoch is when every fixture pod was created, so that runs are reproducible.
var epoch = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

// New returns pod i. It has no resourceVersion: the server gives it one.
func New(i int) *corev1.Pod {
	deploy := i / Replicas
	ns := fmt.Sprintf("team-%02d", deploy%Namespaces)
	app := fmt.Sprintf("svc-%04d", deploy)
	hash := fmt.Sprintf("%08x", uint32(deploy)*2654435761)[:8]
	rs := app + "-" + hash
	created := metav1.NewTime(epoch.Add(time.Duration(i) * time.Second))
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: objectMeta(i, ns, app, hash, rs, created),
		Spec:       spec(i, app),
		Status:     status(i, app, created),
	}
}

func objectMeta(i int, ns, app, hash, rs string, created metav1.Time) metav1.ObjectMeta {
	yes := true
	return metav1.ObjectMeta{
		Name:              fmt.Sprintf("%s-%05x", rs, i),
		GenerateName:      rs + "-",
		Namespace:         ns,
		UID:               types.UID(fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)),
		CreationTimestamp: created,
		Labels: map[string]string{
			"app":                          app,
			"app.kubernetes.io/name":       app,
			"app.kubernetes.io/instance":   app + "-prod",
			"app.kubernetes.io/version":    "1.24.3",
			"app.kubernetes.io/managed-by": "Helm",
			"pod-template-hash":            hash,
			"tier":                         "backend",
		},
		Annotations: map[string]string{
			"kubectl.kubernetes.io/restartedAt": "2026-11-29T22:14:05Z",
			"prometheus.io/scrape":              "true",
			"prometheus.io/port":                "9090",
			"checksum/config":                   fmt.Sprintf("%016x%016x", uint64(i/Replicas)*0x9E3779B97F4A7C15, uint64(i/Replicas)),
		},
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs,
			UID:        ownerUID(i / Replicas),
			Controller: &yes, BlockOwnerDeletion: &yes,
		}},
		ManagedFields: managedFields(created, ownerUID(i/Replicas), podIP(i)),
	}
}

func ownerUID(deploy int) types.UID {
	return types.UID(fmt.Sprintf("%08x-1111-4000-8000-%012x", deploy, deploy))
}

func podIP(i int) string { return fmt.Sprintf("10.%d.%d.%d", 64+i>>16&63, i>>8&255, i&255) }

// managedFields are the two entries a real pod carries: the ReplicaSet
// controller's (the spec; it names the owner's UID, so the pods of one
// ReplicaSet share it) and the kubelet's (the status; it names the pod's
// IP, so it is the pod's own).
func managedFields(at metav1.Time, owner types.UID, ip string) []metav1.ManagedFieldsEntry {
	spec := strings.Replace(specFields, `\"owner\"`, `\"`+string(owner)+`\"`, 1)
	status := strings.Replace(statusFields, `\"pod\"`, `\"`+ip+`\"`, 1)
	return []metav1.ManagedFieldsEntry{
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &at,
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(spec)}},
		{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &at,
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(status)}, Subresource: "status"},
	}
}

const specFields = `{"f:metadata":{"f:annotations":{".":{},"f:checksum/config":{},"f:kubectl.kubernetes.io/restartedAt":{},"f:prometheus.io/port":{},"f:prometheus.io/scrape":{}},"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:app.kubernetes.io/instance":{},"f:app.kubernetes.io/managed-by":{},"f:app.kubernetes.io/name":{},"f:app.kubernetes.io/version":{},"f:pod-template-hash":{},"f:tier":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"owner\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:env":{},"f:image":{},"f:imagePullPolicy":{},"f:livenessProbe":{},"f:name":{},"f:ports":{},"f:readinessProbe":{},"f:resources":{},"f:volumeMounts":{}},"k:{\"name\":\"proxy\"}":{".":{},"f:args":{},"f:image":{},"f:name":{},"f:ports":{},"f:resources":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:serviceAccount":{},"f:serviceAccountName":{},"f:terminationGracePeriodSeconds":{},"f:volumes":{}}}`

const statusFields = `{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Initialized\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"PodReadyToStartContainers\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:hostIPs":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"pod\"}":{".":{},"f:ip":{}}},"f:startTime":{}}}`

func spec(i int, app string) corev1.PodSpec {
	grace := int64(30)
	return corev1.PodSpec{
		Volumes: []corev1.Volume{
			{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: app + "-config"}}}},
			{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			}}}},
		},
		Containers:                    []corev1.Container{appContainer(app), proxyContainer()},
		RestartPolicy:                 corev1.RestartPolicyAlways,
		TerminationGracePeriodSeconds: &grace,
		DNSPolicy:                     corev1.DNSClusterFirst,
		ServiceAccountName:            app,
		NodeName:                      fmt.Sprintf("node-%03d.zone-%c.example.internal", i%Nodes, 'a'+rune(i%Nodes%3)),
		SecurityContext:               &corev1.PodSecurityContext{},
		SchedulerName:                 corev1.DefaultSchedulerName,
		Tolerations: []corev1.Toleration{
			{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
			{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
		},
	}
}

func appContainer(app string) corev1.Container {
	return corev1.Container{
		Name:  "app",
		Image: "registry.example.com/shop/" + app + ":1.24.3",
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}, {Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolTCP}},
		Env: []corev1.EnvVar{
			{Name: "LOG_LEVEL", Value: "info"},
			{Name: "GOMAXPROCS", Value: "2"},
			{Name: "SERVICE_NAME", Value: app},
			{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
			{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}}},
		},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("512Mi")},
		},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "config", MountPath: "/etc/app", ReadOnly: true},
			{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true},
		},
		LivenessProbe:            probe("/healthz"),
		ReadinessProbe:           probe("/ready"),
		TerminationMessagePath:   corev1.TerminationMessagePathDefault,
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		ImagePullPolicy:          corev1.PullIfNotPresent,
	}
}

func proxyContainer() corev1.Container {
	return corev1.Container{
		Name:  "proxy",
		Image: "registry.example.com/mesh/proxy:2.8.1",
		Args:  []string{"proxy", "sidecar", "--log-level=warn", "--concurrency=2"},
		Ports: []corev1.ContainerPort{{Name: "proxy-admin", ContainerPort: 15000, Protocol: corev1.ProtocolTCP}},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
		},
		TerminationMessagePath:   corev1.TerminationMessagePathDefault,
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		ImagePullPolicy:          corev1.PullIfNotPresent,
	}
}

func probe(path string) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("http"), Scheme: corev1.URISchemeHTTP}},
		InitialDelaySeconds: 5, TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3,
	}
}

func status(i int, app string, created metav1.Time) corev1.PodStatus {
	started := metav1.NewTime(created.Add(3 * time.Second))
	hostIP := fmt.Sprintf("10.0.%d.%d", i%Nodes/250, i%Nodes%250+1)
	podIP := podIP(i)
	cond := func(t corev1.PodConditionType) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: started}
	}
	return corev1.PodStatus{
		Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{
			cond("PodReadyToStartContainers"), cond(corev1.PodInitialized), cond(corev1.PodReady),
			cond(corev1.ContainersReady), cond(corev1.PodScheduled),
		},
		HostIP:    hostIP,
		HostIPs:   []corev1.HostIP{{IP: hostIP}},
		PodIP:     podIP,
		PodIPs:    []corev1.PodIP{{IP: podIP}},
		StartTime: &created,
		ContainerStatuses: []corev1.ContainerStatus{
			containerStatus(i, "app", "registry.example.com/shop/"+app+":1.24.3", started),
			containerStatus(i, "proxy", "registry.example.com/mesh/proxy:2.8.1", started),
		},
		QOSClass: corev1.PodQOSBurstable,
	}
}

func containerStatus(i int, name, image string, started metav1.Time) corev1.ContainerStatus {
	yes := true
	return corev1.ContainerStatus{
		Name:         name,
		State:        corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
		Ready:        true,
		RestartCount: 0,
		Image:        image,
		ImageID:      fmt.Sprintf("%s@sha256:%064x", image, len(image)*7919),
		ContainerID:  fmt.Sprintf("containerd://%032x%032x", i, len(name)),
		Started:      &yes,
	}
}
