package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Probes of the error answers: codes, reasons, causes and details, which
// clients branch on.

func probeGetMissing(p *probeEnv) (string, string) {
	r := p.do(http.MethodGet, p.pods()+"/missing", nil, nil)
	return statusKey(r), message(r)
}

func probeCreateExisting(p *probeEnv) (string, string) {
	pod := p.pod("dup", nil)
	body, _ := json.Marshal(testPod(p.ns, pod.Name, nil))
	r := p.do(http.MethodPost, p.pods(), body, nil)
	return statusKey(r), message(r)
}

func probeStaleUpdate(p *probeEnv) (string, string) {
	pod := p.pod("stale", nil)
	fresh := pod.DeepCopy()
	fresh.Labels = map[string]string{"v": "2"}
	update(p.t, p.c, fresh)
	pod.Labels = map[string]string{"v": "3"} // still at the first resourceVersion
	body, _ := json.Marshal(pod)
	r := p.do(http.MethodPut, p.pods()+"/"+pod.Name, body, nil)
	return statusKey(r), message(r)
}

func probeDeleteMissing(p *probeEnv) (string, string) {
	r := p.do(http.MethodDelete, p.pods()+"/missing", nil, nil)
	return statusKey(r), message(r)
}

func probeDeleteAnswer(p *probeEnv) (string, string) {
	pod := p.pod("deleted", nil)
	r := p.do(http.MethodDelete, p.pods()+"/"+pod.Name, nil, nil)
	var got corev1.Pod
	_ = json.Unmarshal(r.Body, &got)
	return fmt.Sprintf("%d %s, RV advanced=%v, deletionTimestamp set=%v", r.Code, got.Kind,
		got.ResourceVersion != pod.ResourceVersion, got.DeletionTimestamp != nil), ""
}

func probeMissingNamespace(p *probeEnv) (string, string) {
	body, _ := json.Marshal(testPod("no-such-namespace", "orphan", nil))
	r := p.do(http.MethodPost, "/api/v1/namespaces/no-such-namespace/pods", body, nil)
	if r.Code < 300 {
		return fmt.Sprintf("%d (created)", r.Code), ""
	}
	return statusKey(r), message(r)
}

func probeStaleDelete(p *probeEnv) (string, string) {
	pod := p.pod("stale-delete", nil)
	fresh := pod.DeepCopy()
	fresh.Labels = map[string]string{"v": "2"}
	update(p.t, p.c, fresh)
	body, _ := json.Marshal(metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"},
		Preconditions: &metav1.Preconditions{ResourceVersion: &pod.ResourceVersion}})
	r := p.do(http.MethodDelete, p.pods()+"/"+pod.Name, body, nil)
	return statusKey(r), message(r)
}

func probeKindMismatch(p *probeEnv) (string, string) {
	cm := testConfigMap(p.ns, "not-a-pod", "v")
	cm.TypeMeta = metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"}
	body, _ := json.Marshal(cm)
	r := p.do(http.MethodPost, p.pods(), body, nil)
	return statusKey(r), message(r)
}

func probeInvalidName(p *probeEnv) (string, string) {
	body, _ := json.Marshal(testPod(p.ns, "Not_A_DNS_Name", nil))
	r := p.do(http.MethodPost, p.pods(), body, nil)
	st, _ := r.status()
	var fields []string
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			fields = append(fields, c.Field)
		}
	}
	return statusKey(r) + " fields=" + strings.Join(fields, ","), message(r)
}

func probeInvalidSpec(p *probeEnv) (string, string) {
	pod := testPod(p.ns, "empty", nil)
	pod.Spec.Containers = nil
	body, _ := json.Marshal(pod)
	r := p.do(http.MethodPost, p.pods(), body, nil)
	if r.Code < 300 {
		return fmt.Sprintf("%d (created)", r.Code), ""
	}
	return statusKey(r), message(r)
}

func probeUnknownResource(p *probeEnv) (string, string) {
	r := p.do(http.MethodGet, "/api/v1/namespaces/"+p.ns+"/widgets", nil, nil)
	return statusKey(r), message(r)
}

func probeNotAcceptable(p *probeEnv) (string, string) {
	r := p.do(http.MethodGet, p.pods(), nil, http.Header{"Accept": {"text/csv"}})
	var st struct {
		Details json.RawMessage `json:"details"`
	}
	_ = json.Unmarshal(r.Body, &st)
	return fmt.Sprintf("%s details=%s", statusKey(r), st.Details), message(r)
}

func probeWrongToken(p *probeEnv) (string, string) {
	r := p.do(http.MethodGet, p.pods(), nil, http.Header{"Authorization": {"Bearer wrong"}})
	return statusKey(r), message(r)
}
