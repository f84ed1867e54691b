package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// Probes of issue #32's items 14, 15 and 16: what a write leaves of the
// object and of its owners, and the exact Statuses of two refusals.

// probeNoopManifest PUTs back the manifests a pod and a Service were
// created from, with their resourceVersion: the server puts back what it
// assigned (priority, cluster IP), so neither PUT is a write.
func probeNoopManifest(p *probeEnv) (string, string) {
	var parts []string
	for _, tc := range []struct{ resource, manifest string }{
		{"pods", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"noop-manifest"%s},"spec":{"containers":[{"name":"c","image":"registry.invalid/c:1"}]}}`},
		{"services", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"noop-manifest"%s},"spec":{"ports":[{"port":80}]}}`},
	} {
		path := "/api/v1/namespaces/" + p.ns + "/" + tc.resource
		created := p.do(http.MethodPost, path, []byte(fmt.Sprintf(tc.manifest, "")), nil)
		var before metav1.PartialObjectMetadata
		_ = json.Unmarshal(created.Body, &before)
		put := p.do(http.MethodPut, path+"/noop-manifest",
			[]byte(fmt.Sprintf(tc.manifest, `,"resourceVersion":"`+before.ResourceVersion+`"`)), nil)
		var after metav1.PartialObjectMetadata
		_ = json.Unmarshal(put.Body, &after)
		parts = append(parts, fmt.Sprintf("%s: create %d, PUT %d, resourceVersion unchanged=%v", tc.resource, created.Code, put.Code,
			put.Code == http.StatusOK && after.ResourceVersion == before.ResourceVersion))
	}
	return strings.Join(parts, "; "), ""
}

// probeApplyUndeclared applies a Deployment with a field its schema does
// not declare, with and without strict field validation: the whole Status
// is the key, message included.
func probeApplyUndeclared(p *probeEnv) (string, string) {
	path := "/apis/apps/v1/namespaces/" + p.ns + "/deployments/undeclared?fieldManager=probe"
	body := []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"undeclared"},"spec":{"replicas":1,"bogus":true,` +
		`"selector":{"matchLabels":{"app":"u"}},"template":{"metadata":{"labels":{"app":"u"}},` +
		`"spec":{"containers":[{"name":"app","image":"registry.invalid/app:1"}]}}}}`)
	var parts []string
	for _, v := range []string{"", "&fieldValidation=Strict"} {
		r := p.do(http.MethodPatch, path+v, body, http.Header{"Content-Type": {"application/apply-patch+yaml"}})
		parts = append(parts, fmt.Sprintf("fieldValidation=%q: %d %s", strings.TrimPrefix(v, "&fieldValidation="), r.Code, compactJSON(r.Body)))
	}
	return strings.Join(parts, "; "), ""
}

// probeNotAcceptableDetails asks for a YAML watch and for a list as
// PartialObjectMetadata: 406s whose Status has no details, unlike the one
// for an Accept the server cannot serve at all.
func probeNotAcceptableDetails(p *probeEnv) (string, string) {
	var parts []string
	for _, tc := range []struct{ what, query, accept string }{
		{"JSON watch asked as YAML", "?watch=true", "application/yaml"},
		{"list as PartialObjectMetadata", "", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"},
	} {
		r := p.do(http.MethodGet, p.pods()+tc.query, nil, http.Header{"Accept": {tc.accept}})
		var st struct {
			Details json.RawMessage `json:"details"`
		}
		asJSON, _ := yaml.YAMLToJSON(r.Body) // the YAML watch's 406 is YAML
		_ = json.Unmarshal(asJSON, &st)
		parts = append(parts, fmt.Sprintf("%s: %d %s details=%q", tc.what, r.Code, r.ContentType, st.Details))
	}
	return strings.Join(parts, "; "), ""
}

// probeScaleOwners writes a Deployment's replicas through a patch, then
// its image through a strategic merge patch, then its replicas through
// /scale, each with its own manager, and applies the first manifest: the
// scale takes the replicas from the patcher, so the apply conflicts with
// the scaler and the image setter only.
func probeScaleOwners(p *probeEnv) (string, string) {
	path := "/apis/apps/v1/namespaces/" + p.ns + "/deployments"
	manifest := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"owners"},"spec":{"replicas":2,` +
		`"selector":{"matchLabels":{"app":"owners"}},"template":{"metadata":{"labels":{"app":"owners"}},` +
		`"spec":{"containers":[{"name":"app","image":"registry.invalid/app:1"}]}}}}`
	steps := []struct {
		method, path, contentType, body string
	}{
		{http.MethodPost, path + "?fieldManager=creator", "application/json", manifest},
		{http.MethodPatch, path + "/owners?fieldManager=patcher", "application/merge-patch+json", `{"spec":{"replicas":3}}`},
		{http.MethodPatch, path + "/owners?fieldManager=setter", "application/strategic-merge-patch+json",
			`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.invalid/app:2"}]}}}}`},
		{http.MethodPatch, path + "/owners/scale?fieldManager=scaler", "application/merge-patch+json", `{"spec":{"replicas":5}}`},
	}
	var codes []string
	for _, s := range steps {
		r := p.do(s.method, s.path, []byte(s.body), http.Header{"Content-Type": {s.contentType}})
		codes = append(codes, fmt.Sprint(r.Code))
	}
	got := p.do(http.MethodGet, path+"/owners", nil, nil)
	var d metav1.PartialObjectMetadata
	_ = json.Unmarshal(got.Body, &d)
	var entries []string
	for _, e := range d.ManagedFields {
		owns := ""
		if e.FieldsV1 != nil && strings.Contains(string(e.FieldsV1.Raw), `"f:replicas"`) {
			owns = " owns replicas"
		}
		entries = append(entries, fmt.Sprintf("%s/%s/%s/%s time=%v%s", e.Manager, e.Operation, e.APIVersion, e.Subresource, e.Time != nil, owns))
	}
	sort.Strings(entries)
	applied := p.do(http.MethodPatch, path+"/owners?fieldManager=creator-apply", []byte(manifest),
		http.Header{"Content-Type": {"application/apply-patch+yaml"}})
	st, _ := applied.status()
	var conflicts []string
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			conflicts = append(conflicts, c.Field+" "+c.Message)
		}
	}
	sort.Strings(conflicts)
	return fmt.Sprintf("writes %s; entries %v; apply %s conflicts %q", strings.Join(codes, ","), entries, statusKey(applied), conflicts), ""
}

// compactJSON renders a JSON body on one line, keys sorted, so that two
// servers' bodies compare whatever their field order.
func compactJSON(body []byte) string {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return fmt.Sprintf("%.200q", body)
	}
	out, _ := json.Marshal(v)
	return string(out)
}
