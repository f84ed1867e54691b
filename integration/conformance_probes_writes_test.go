package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Probes of what the server does to what it is sent: patches, /status
// writes, managedFields, generation, defaults, no-op updates.

func probeMergePatch(p *probeEnv) (string, string) {
	pod := p.pod("patched", map[string]string{"a": "1"})
	r := p.do(http.MethodPatch, p.pods()+"/"+pod.Name, []byte(`{"metadata":{"labels":{"b":"2"}}}`),
		http.Header{"Content-Type": {"application/merge-patch+json"}})
	var got corev1.Pod
	_ = json.Unmarshal(r.Body, &got)
	return fmt.Sprintf("%d, labels %v, RV advanced=%v, managedFields entries %d", r.Code, got.Labels,
		got.ResourceVersion != pod.ResourceVersion, len(got.ManagedFields)), ""
}

func probeStatusSubresource(p *probeEnv) (string, string) {
	pod := p.pod("status", map[string]string{"a": "1"})
	pod.Labels = map[string]string{"a": "2"}
	pod.Spec.Containers[0].Image = "registry.invalid/other:2"
	pod.Status.Message = "hello"
	body, _ := json.Marshal(pod)
	r := p.do(http.MethodPut, p.pods()+"/"+pod.Name+"/status", body, nil)
	var got corev1.Pod
	_ = json.Unmarshal(r.Body, &got)
	podKey := fmt.Sprintf("pod: %d, label a=%s, image changed=%v, status.message=%q", r.Code, got.Labels["a"],
		got.Spec.Containers[0].Image != "registry.invalid/app:1", got.Status.Message)

	d := create(p.t, p.c, testDeployment(p.ns, "status", 1))
	d.Labels = map[string]string{"a": "2"}
	d.Annotations = map[string]string{"b": "3"}
	d.Status.Replicas = 7
	body, _ = json.Marshal(d)
	r = p.do(http.MethodPut, "/apis/apps/v1/namespaces/"+p.ns+"/deployments/status/status", body, nil)
	var gotD appsv1.Deployment
	_ = json.Unmarshal(r.Body, &gotD)
	return podKey + fmt.Sprintf("; deployment: %d, labels %v, annotations %v, status.replicas=%d", r.Code,
		gotD.Labels, gotD.Annotations, gotD.Status.Replicas), ""
}

func probeManagedFields(p *probeEnv) (string, string) {
	pod := p.pod("managed", map[string]string{"a": "b"})
	if len(pod.ManagedFields) == 0 {
		return "none", ""
	}
	var ops []string
	for _, m := range pod.ManagedFields {
		ops = append(ops, fmt.Sprintf("%s/%s/%s", m.Operation, m.APIVersion, m.FieldsType))
	}
	return fmt.Sprintf("%d entry: %s", len(pod.ManagedFields), strings.Join(ops, ",")),
		"manager " + pod.ManagedFields[0].Manager
}

func probeNoopUpdate(p *probeEnv) (string, string) {
	pod := p.pod("noop", map[string]string{"a": "b"})
	again := update(p.t, p.c, pod.DeepCopy())
	return fmt.Sprintf("resourceVersion unchanged=%v", again.ResourceVersion == pod.ResourceVersion), ""
}

func probeGeneration(p *probeEnv) (string, string) {
	gen := func(obj metav1.Object) string {
		return fmt.Sprintf("%s=%d", strings.ToLower(kindOf(obj)), obj.GetGeneration())
	}
	parts := []string{
		gen(p.pod("gen", nil)),
		gen(create(p.t, p.c, testService(p.ns, "gen"))),
		gen(create(p.t, p.c, testConfigMap(p.ns, "gen", "v"))),
		gen(create(p.t, p.c, testDeployment(p.ns, "gen", 1))),
		gen(create(p.t, p.c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.ns + "-gen"}})),
	}
	return strings.Join(parts, " "), ""
}

func kindOf(obj metav1.Object) string {
	return strings.TrimPrefix(fmt.Sprintf("%T", obj), "*v1.")
}

func probeNamespaceDefaults(p *probeEnv) (string, string) {
	ns := create(p.t, p.c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.ns + "-defaults"}})
	return fmt.Sprintf("labels %v, spec.finalizers %v, status.phase %q", ns.Labels, ns.Spec.Finalizers, ns.Status.Phase), ""
}
