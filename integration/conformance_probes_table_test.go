package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Table output, as kubectl get asks for it: the columns of each kind and
// the cells of one object, with ages and allocated addresses masked (they
// differ by timing and allocator, not by behaviour).

const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

var (
	ageCell = regexp.MustCompile(`^[0-9]+(s|m|h|d|y)([0-9]+(s|m|h))?$`)
	ipCell  = regexp.MustCompile(`^10\.0\.[0-9]+\.[0-9]+$`)
)

// tableKey reduces a Table to its columns and the row of the named object.
func (p *probeEnv) tableKey(path, name string) string {
	r := p.do(http.MethodGet, path, nil, http.Header{"Accept": {tableAccept}})
	var table metav1.Table
	if err := json.Unmarshal(r.Body, &table); err != nil || table.Kind != "Table" {
		return fmt.Sprintf("%d %s %.80q", r.Code, r.ContentType, r.Body)
	}
	var cols []string
	for _, c := range table.ColumnDefinitions {
		cols = append(cols, fmt.Sprintf("%s:%s:%d", c.Name, c.Type, c.Priority))
	}
	row := "no row"
	for _, rw := range table.Rows {
		var obj metav1.PartialObjectMetadata
		_ = json.Unmarshal(rw.Object.Raw, &obj)
		if obj.Name != name {
			continue
		}
		var cells []string
		for _, c := range rw.Cells {
			s := fmt.Sprint(c)
			switch {
			case ageCell.MatchString(s):
				s = "AGE"
			case ipCell.MatchString(s):
				s = "IP"
			}
			cells = append(cells, fmt.Sprintf("%T(%s)", c, s))
		}
		row = obj.Kind + " " + strings.Join(cells, " ")
	}
	return fmt.Sprintf("[%s] %s", strings.Join(cols, " "), row)
}

func probeTables(p *probeEnv) (string, string) {
	ns := "/api/v1/namespaces/" + p.ns
	apps := "/apis/apps/v1/namespaces/" + p.ns
	p.pod("table-pod", nil)
	create(p.t, p.c, testDeployment(p.ns, "table-deploy", 2))
	create(p.t, p.c, testService(p.ns, "table-svc"))
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: "table-rs"}, Spec: appsv1.ReplicaSetSpec{
		Selector: &metav1.LabelSelector{MatchLabels: web}, Template: testDeployment(p.ns, "x", 1).Spec.Template}}
	rs.Spec.Template.Labels = web
	body, _ := json.Marshal(rs)
	p.do(http.MethodPost, apps+"/replicasets", body, nil)
	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: "table-event"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: p.ns, Name: "table-pod"},
		Reason:         "Probed", Message: "hello", Type: corev1.EventTypeNormal, Count: 1,
		FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(), Source: corev1.EventSource{Component: "probe"}}
	body, _ = json.Marshal(ev)
	p.do(http.MethodPost, ns+"/events", body, nil)
	parts := []string{
		"pods " + p.tableKey(ns+"/pods", "table-pod"),
		"deployments " + p.tableKey(apps+"/deployments", "table-deploy"),
		"replicasets " + p.tableKey(apps+"/replicasets", "table-rs"),
		"services " + p.tableKey(ns+"/services", "table-svc"),
		"namespaces " + p.tableKey("/api/v1/namespaces", p.ns),
		"events " + p.tableKey(ns+"/events", "table-event"),
		"one pod " + p.tableKey(ns+"/pods/table-pod", "table-pod"),
	}
	return strings.Join(parts, "; "), ""
}
