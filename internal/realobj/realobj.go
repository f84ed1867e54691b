package realobj

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed31a95821/informer/internal/realpod"
)

// RoundAnnotation is the annotation Touch writes the round into.
const RoundAnnotation = "bench.informer/round"

// epoch is when every fixture object was created.
var epoch = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

func objectMeta(ns, name string, i int, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Namespace: ns, Name: name,
		UID:               types.UID(fmt.Sprintf("%08x-2222-4000-8000-%012x", i, i)),
		CreationTimestamp: metav1.NewTime(epoch.Add(time.Duration(i) * time.Second)),
		Labels:            labels,
	}
}

// pem is a certificate-sized block of text: every namespace's copy of one
// cluster CA is equal to the others.
func pem(seed string) string {
	var b strings.Builder
	b.WriteString("-----BEGIN CERTIFICATE-----\n")
	for line := range 18 {
		fmt.Fprintf(&b, "%064x\n", uint64(len(seed))*0x9E3779B97F4A7C15+uint64(line)*0xC2B2AE3D27D4EB4F)
	}
	b.WriteString("-----END CERTIFICATE-----\n")
	return b.String()
}

// unique is n bytes of text that only i has.
func unique(i, n int) []byte {
	b := make([]byte, 0, n+16)
	for x := uint64(i)*0x9E3779B97F4A7C15 + 1; len(b) < n; x = x*6364136223846793005 + 1442695040888963407 {
		b = strconv.AppendUint(b, x, 36)
	}
	return b[:n]
}

func namespace(i, perNamespace int) string { return fmt.Sprintf("team-%03d", i/perNamespace) }

// ConfigMap is ConfigMap i: in each namespace, five in a row, the
// cluster's CA (kube-root-ca.crt) and the mesh's (istio-ca-root-cert),
// equal in every namespace, the shared settings most apps read, and two
// of the namespace's apps' own configuration.
func ConfigMap(i int) *corev1.ConfigMap {
	ns := namespace(i, 5)
	app := fmt.Sprintf("svc-%04d", i)
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}}
	switch i % 5 {
	case 0:
		cm.ObjectMeta = objectMeta(ns, "kube-root-ca.crt", i, nil)
		cm.Annotations = map[string]string{"kubernetes.io/description": "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters."}
		cm.Data = map[string]string{"ca.crt": pem("cluster")}
	case 1:
		cm.ObjectMeta = objectMeta(ns, "istio-ca-root-cert", i, map[string]string{"istio.io/config": "true"})
		cm.Data = map[string]string{"root-cert.pem": pem("mesh")}
	case 2:
		cm.ObjectMeta = objectMeta(ns, "shared-settings", i, map[string]string{"app.kubernetes.io/managed-by": "Helm"})
		cm.Data = map[string]string{"LOG_LEVEL": "info", "REGION": "eu-west-1", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel-collector.observability:4317"}
	default:
		cm.ObjectMeta = objectMeta(ns, app+"-config", i, map[string]string{"app": app, "app.kubernetes.io/managed-by": "Helm"})
		cm.Annotations = map[string]string{"meta.helm.sh/release-name": app, "meta.helm.sh/release-namespace": ns}
		cm.Data = map[string]string{"app.yaml": "server:\n  port: 8080\n  name: " + app + "\nfeatures:\n  " + string(unique(i, 400)) + "\n"}
	}
	return cm
}

// Secret is Secret i: in each namespace, four in a row, a legacy service
// account token (its ca.crt is the cluster's, its token its own), the
// registry's pull secret (equal in every namespace), a Helm release (its
// own) and a TLS pair (its own).
func Secret(i int) *corev1.Secret {
	ns := namespace(i, 4)
	app := fmt.Sprintf("svc-%04d", i)
	s := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}}
	switch i % 4 {
	case 0:
		s.ObjectMeta = objectMeta(ns, "default-token-"+string(unique(i, 5)), i, nil)
		s.Annotations = map[string]string{"kubernetes.io/service-account.name": "default", "kubernetes.io/service-account.uid": string(unique(i, 36))}
		s.Type = corev1.SecretTypeServiceAccountToken
		s.Data = map[string][]byte{"ca.crt": []byte(pem("cluster")), "namespace": []byte(ns), "token": unique(i, 900)}
	case 1:
		s.ObjectMeta = objectMeta(ns, "registry-pull", i, map[string]string{"app.kubernetes.io/managed-by": "external-secrets"})
		s.Type = corev1.SecretTypeDockerConfigJson
		s.Data = map[string][]byte{".dockerconfigjson": []byte(`{"auths":{"registry.example.com":{"auth":"` + string(unique(-1, 120)) + `"}}}`)}
	case 2:
		s.ObjectMeta = objectMeta(ns, "sh.helm.release.v1."+app+".v3", i, map[string]string{"name": app, "owner": "helm", "status": "deployed", "version": "3"})
		s.Type = "helm.sh/release.v1"
		s.Data = map[string][]byte{"release": unique(i, 3000)}
	default:
		s.ObjectMeta = objectMeta(ns, app+"-tls", i, map[string]string{"app": app})
		s.Annotations = map[string]string{"cert-manager.io/issuer-name": "internal-ca", "cert-manager.io/issuer-kind": "ClusterIssuer"}
		s.Type = corev1.SecretTypeTLS
		s.Data = map[string][]byte{"tls.crt": unique(i, 1100), "tls.key": unique(-i-2, 1700), "ca.crt": []byte(pem("internal-ca"))}
	}
	return s
}

// Deployment is Deployment i: the one that owns realpod's pods
// i*realpod.Replicas and up.
func Deployment(i int) *appsv1.Deployment {
	p := realpod.New(i * realpod.Replicas)
	app := p.Labels["app"]
	replicas := int32(realpod.Replicas)
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: objectMeta(p.Namespace, app, i, map[string]string{"app": app, "app.kubernetes.io/managed-by": "Helm", "tier": "backend"}),
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
			Template: template(p),
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType},
		},
		Status: appsv1.DeploymentStatus{
			ObservedGeneration: 3, Replicas: replicas, UpdatedReplicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable", Message: "Deployment has minimum availability."},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable", Message: fmt.Sprintf("ReplicaSet %q has successfully progressed.", p.OwnerReferences[0].Name)},
			},
		},
	}
	d.Annotations = map[string]string{"deployment.kubernetes.io/revision": "3", "meta.helm.sh/release-name": app}
	return d
}

// ReplicaSet is ReplicaSet i: the current one of Deployment i/2 when i
// is even, else an old one scaled to zero with the template the current
// one had before its last rollout (another image).
func ReplicaSet(i int) *appsv1.ReplicaSet {
	p := realpod.New(i / 2 * realpod.Replicas)
	app := p.Labels["app"]
	replicas := int32(realpod.Replicas)
	name := p.OwnerReferences[0].Name
	t := template(p)
	if i%2 == 1 {
		replicas = 0
		hash := fmt.Sprintf("%08x", uint32(i)*2246822519)
		name = app + "-" + hash
		t.Labels["pod-template-hash"] = hash
		t.Spec.Containers[0].Image = strings.Replace(t.Spec.Containers[0].Image, "1.24.3", "1.24.2", 1)
	}
	yes := true
	rs := &appsv1.ReplicaSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: objectMeta(p.Namespace, name, i, t.Labels),
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app, "pod-template-hash": t.Labels["pod-template-hash"]}},
			Template: t,
		},
		Status: appsv1.ReplicaSetStatus{Replicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas, ObservedGeneration: 1},
	}
	rs.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: app,
		UID: types.UID(fmt.Sprintf("%08x-2222-4000-8000-%012x", i/2, i/2)), Controller: &yes, BlockOwnerDeletion: &yes}}
	rs.Annotations = map[string]string{"deployment.kubernetes.io/desired-replicas": "10", "deployment.kubernetes.io/max-replicas": "13", "deployment.kubernetes.io/revision": strconv.Itoa(3 - i%2)}
	return rs
}

// template is the pod template pod p was made from.
func template(p *corev1.Pod) corev1.PodTemplateSpec {
	labels := make(map[string]string, len(p.Labels))
	for k, v := range p.Labels {
		labels[k] = v
	}
	spec := *p.Spec.DeepCopy()
	spec.NodeName = ""
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{"checksum/config": p.Annotations["checksum/config"]}},
		Spec:       spec,
	}
}

// Node is Node i, of pool i%3: the pool's labels, capacity, taints and
// images, and its own name, addresses, IDs and heartbeats.
func Node(i int) *corev1.Node {
	pool := []string{"general", "memory", "batch"}[i%3]
	name := fmt.Sprintf("node-%03d.zone-%c.example.internal", i, 'a'+rune(i%3))
	n := &corev1.Node{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: objectMeta("", name, i, map[string]string{
			"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
			"beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64",
			"node.kubernetes.io/instance-type": "m6i." + map[string]string{"general": "2xlarge", "memory": "4xlarge", "batch": "8xlarge"}[pool],
			"topology.kubernetes.io/region":    "eu-west-1", "topology.kubernetes.io/zone": fmt.Sprintf("eu-west-1%c", 'a'+rune(i%3)),
			"pool": pool,
		}),
	}
	n.Annotations = map[string]string{"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"}
	n.Spec.PodCIDR = fmt.Sprintf("10.%d.%d.0/24", 64+i>>8, i&255)
	n.Spec.PodCIDRs = []string{n.Spec.PodCIDR}
	n.Spec.ProviderID = "aws:///eu-west-1a/i-" + string(unique(i, 17))
	if pool == "batch" {
		n.Spec.Taints = []corev1.Taint{{Key: "workload", Value: "batch", Effect: corev1.TaintEffectNoSchedule}}
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32386524Ki"),
		corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("104845292Ki"),
	}
	allocatable := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("7910m"), corev1.ResourceMemory: resource.MustParse("31369692Ki"),
		corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("95551679124"),
	}
	beat := metav1.NewTime(epoch.Add(time.Duration(i) * time.Second))
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, LastHeartbeatTime: beat, LastTransitionTime: metav1.NewTime(epoch), Reason: reason, Message: msg}
	}
	n.Status = corev1.NodeStatus{
		Capacity: capacity, Allocatable: allocatable,
		Conditions: []corev1.NodeCondition{
			cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
			cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
			cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
			cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
		},
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.0.%d.%d", i/250, i%250+1)},
			{Type: corev1.NodeHostName, Address: name},
			{Type: corev1.NodeInternalDNS, Address: "ip-" + strings.ReplaceAll(fmt.Sprintf("10.0.%d.%d", i/250, i%250+1), ".", "-") + ".eu-west-1.compute.internal"},
		},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
		NodeInfo: corev1.NodeSystemInfo{
			MachineID: string(unique(i, 32)), SystemUUID: string(unique(-i-1, 36)), BootID: string(unique(i+1<<20, 36)),
			KernelVersion: "6.1.112-124.190.amzn2023.x86_64", OSImage: "Amazon Linux 2023.6.20241121",
			ContainerRuntimeVersion: "containerd://1.7.23", KubeletVersion: "v1.31.2-eks-94953ac", KubeProxyVersion: "v1.31.2-eks-94953ac",
			OperatingSystem: "linux", Architecture: "amd64",
		},
		Images: images(pool),
	}
	return n
}

// images is what every node of a pool has pulled: the system's images and
// the pool's.
func images(pool string) []corev1.ContainerImage {
	var out []corev1.ContainerImage
	for j, name := range []string{"kube-proxy", "aws-node", "coredns", "ebs-csi-node", "node-exporter", "fluent-bit", "proxy", "pause", "otel-agent", pool + "-runner"} {
		repo := "registry.example.com/system/" + name
		out = append(out, corev1.ContainerImage{
			Names:     []string{fmt.Sprintf("%s@sha256:%064x", repo, j*7919+len(pool)), repo + ":v1." + strconv.Itoa(j)},
			SizeBytes: int64(10_000_000 + j*1_234_567),
		})
	}
	return out
}
