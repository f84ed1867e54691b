package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Probes of what kubectl needs from a server beyond list and watch: patch
// types, defaults and validation, events, /scale, discovery forms, OpenAPI.

func probeStrategicMergePatch(p *probeEnv) (string, string) {
	pod := testPod(p.ns, "smp", nil)
	pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "sidecar", Image: "registry.invalid/side:1"})
	pod = create(p.t, p.c, pod)
	// What kubectl set image sends.
	r := p.do(http.MethodPatch, p.pods()+"/"+pod.Name, []byte(`{"spec":{"containers":[{"name":"app","image":"registry.invalid/app:2"}]}}`),
		http.Header{"Content-Type": {"application/strategic-merge-patch+json"}})
	var got corev1.Pod
	_ = json.Unmarshal(r.Body, &got)
	var images []string
	for _, c := range got.Spec.Containers {
		images = append(images, c.Name+"="+c.Image)
	}
	bad := p.do(http.MethodPatch, p.pods()+"/"+pod.Name, []byte(`{"spec":{"containers":[{"name":"app","image":""}]}}`),
		http.Header{"Content-Type": {"application/strategic-merge-patch+json"}})
	return fmt.Sprintf("%d %v; emptied image: %s", r.Code, images, statusKey(bad)), message(bad)
}

func probeJSONPatch(p *probeEnv) (string, string) {
	pod := p.pod("jsonpatch", map[string]string{"a": "1"})
	ct := http.Header{"Content-Type": {"application/json-patch+json"}}
	r := p.do(http.MethodPatch, p.pods()+"/"+pod.Name,
		[]byte(`[{"op":"replace","path":"/metadata/labels/a","value":"2"},{"op":"add","path":"/metadata/labels/b","value":"3"}]`), ct)
	var got corev1.Pod
	_ = json.Unmarshal(r.Body, &got)
	failed := p.do(http.MethodPatch, p.pods()+"/"+pod.Name, []byte(`[{"op":"test","path":"/metadata/name","value":"other"}]`), ct)
	notList := p.do(http.MethodPatch, p.pods()+"/"+pod.Name, []byte(`{"op":"add"}`), ct)
	unknown := p.do(http.MethodPatch, p.pods()+"/"+pod.Name, []byte(`{}`), http.Header{"Content-Type": {"application/x-patch"}})
	return fmt.Sprintf("%d labels %v; failed test op: %s; not a list: %s; unknown patch type: %s",
		r.Code, got.Labels, statusKey(failed), statusKey(notList), statusKey(unknown)), message(unknown)
}

func probePodDefaults(p *probeEnv) (string, string) {
	pod := testPod(p.ns, "defaults", nil)
	pod.Status.Phase = corev1.PodRunning // the server's, not the client's
	pod = create(p.t, p.c, pod)
	s, c := pod.Spec, pod.Spec.Containers[0]
	var tolerations []string
	for _, t := range s.Tolerations {
		tolerations = append(tolerations, fmt.Sprintf("%s:%s:%s:%d", t.Key, t.Operator, t.Effect, deref(t.TolerationSeconds)))
	}
	return fmt.Sprintf("phase %s qos %s; restartPolicy %s dnsPolicy %s scheduler %s grace %d serviceLinks %v "+
		"securityContext %v priority %d preemption %s serviceAccount %q; tolerations %v; "+
		"container pull %s message %s %s",
		pod.Status.Phase, pod.Status.QOSClass, s.RestartPolicy, s.DNSPolicy, s.SchedulerName,
		deref(s.TerminationGracePeriodSeconds), deref(s.EnableServiceLinks), s.SecurityContext != nil, deref(s.Priority),
		deref(s.PreemptionPolicy), s.ServiceAccountName, tolerations,
		c.ImagePullPolicy, c.TerminationMessagePath, c.TerminationMessagePolicy), ""
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func probeInvalidImage(p *probeEnv) (string, string) {
	pod := testPod(p.ns, "no-image", nil)
	pod.Spec.Containers[0].Image = ""
	body, _ := json.Marshal(pod)
	r := p.do(http.MethodPost, p.pods(), body, nil)
	return statusKey(r) + " fields=" + causeFields(r), message(r)
}

func causeFields(r rawResponse) string {
	st, _ := r.status()
	var fields []string
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			fields = append(fields, c.Field)
		}
	}
	return strings.Join(fields, ",")
}

func probePhaseSelector(p *probeEnv) (string, string) {
	q := url.Values{"fieldSelector": {"status.phase=Pending"}, "labelSelector": {"phase-probe"}}
	res := p.watch(q, func() { p.pod("phase", map[string]string{"phase-probe": "1"}) }, untilAny, 10*time.Second)
	listed := p.names(url.Values{"fieldSelector": {"status.phase=Pending"}, "labelSelector": {"phase-probe"}})
	return fmt.Sprintf("watch status.phase=Pending: %d %s; list: %s", res.Code, countedTypes(res.Events), listed), ""
}

func probeEvents(p *probeEnv) (string, string) {
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: p.ns, Name: "probe-event"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: p.ns, Name: "somepod"},
		Reason:         "Probed", Message: "hello", Type: corev1.EventTypeNormal, Count: 1,
	}
	body, _ := json.Marshal(ev)
	created := p.do(http.MethodPost, "/api/v1/namespaces/"+p.ns+"/events", body, nil)
	list := p.do(http.MethodGet, "/api/v1/namespaces/"+p.ns+"/events?fieldSelector="+
		url.QueryEscape("involvedObject.name=somepod,involvedObject.kind=Pod,type=Normal"), nil, nil)
	var items metav1.PartialObjectMetadataList
	_ = json.Unmarshal(list.Body, &items)
	return fmt.Sprintf("create %d, list by involvedObject %d items=%d", created.Code, list.Code, len(items.Items)), ""
}

func probeScale(p *probeEnv) (string, string) {
	d := create(p.t, p.c, testDeployment(p.ns, "scaled", 2))
	path := "/apis/apps/v1/namespaces/" + p.ns + "/deployments/" + d.Name + "/scale"
	got := p.do(http.MethodGet, path, nil, nil)
	var scale autoscalingv1.Scale
	_ = json.Unmarshal(got.Body, &scale)
	patched := p.do(http.MethodPatch, path, []byte(`{"spec":{"replicas":4}}`), http.Header{"Content-Type": {"application/merge-patch+json"}})
	var after autoscalingv1.Scale
	_ = json.Unmarshal(patched.Body, &after)
	again := get(p.t, p.c, d)
	return fmt.Sprintf("GET %d %s %s replicas=%d selector=%q; PATCH %d replicas=%d; deployment replicas=%d generation=%d",
		got.Code, scale.APIVersion, scale.Kind, scale.Spec.Replicas, scale.Status.Selector,
		patched.Code, after.Spec.Replicas, deref(again.Spec.Replicas), again.Generation), ""
}

func probeAggregatedDiscovery(p *probeEnv) (string, string) {
	r := p.do(http.MethodGet, "/apis", nil, http.Header{"Accept": {
		"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;q=0.9"}})
	var list struct {
		Kind  string `json:"kind"`
		Items []struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
			Versions []struct {
				Version   string `json:"version"`
				Freshness string `json:"freshness"`
				Resources []struct {
					Resource     string   `json:"resource"`
					Scope        string   `json:"scope"`
					ShortNames   []string `json:"shortNames"`
					Categories   []string `json:"categories"`
					Subresources []struct {
						Subresource  string                  `json:"subresource"`
						ResponseKind metav1.GroupVersionKind `json:"responseKind"`
					} `json:"subresources"`
				} `json:"resources"`
			} `json:"versions"`
		} `json:"items"`
	}
	_ = json.Unmarshal(r.Body, &list)
	var deploy string
	for _, g := range list.Items {
		if g.Metadata.Name != "apps" {
			continue
		}
		for _, res := range g.Versions[0].Resources {
			if res.Resource == "deployments" {
				var subs []string
				for _, s := range res.Subresources {
					subs = append(subs, s.Subresource+"→"+s.ResponseKind.String())
				}
				deploy = fmt.Sprintf("apps/%s %s: %s %v %v %v", g.Versions[0].Version, g.Versions[0].Freshness,
					res.Scope, res.ShortNames, res.Categories, subs)
			}
		}
	}
	return fmt.Sprintf("%d %s %s; deployments in %s", r.Code, r.ContentType, list.Kind, deploy), ""
}

func probeUnknownGroup(p *probeEnv) (string, string) {
	var parts []string
	for _, path := range []string{"/apis/nosuch.example.com/v1/namespaces/" + p.ns + "/widgets", "/apis/nosuch.example.com"} {
		r := p.do(http.MethodGet, path, nil, nil)
		parts = append(parts, fmt.Sprintf("%d %s %q", r.Code, r.ContentType, r.Body))
	}
	return strings.Join(parts, "; "), ""
}

func probeResourceListShape(p *probeEnv) (string, string) {
	keysOf := func(path string) []string {
		r := p.do(http.MethodGet, path, nil, nil)
		var doc map[string]json.RawMessage
		_ = json.Unmarshal(r.Body, &doc)
		var keys []string
		for k := range doc {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return keys
	}
	core := keysOf("/api/v1")
	r := p.do(http.MethodGet, "/apis/apps/v1", nil, nil)
	var list metav1.APIResourceList
	_ = json.Unmarshal(r.Body, &list)
	var names []string
	for _, res := range list.APIResources {
		if strings.HasPrefix(res.Name, "deployments") {
			names = append(names, res.Name+"("+res.Group+"/"+res.Version+" "+res.Kind+")")
		}
	}
	return fmt.Sprintf("/api/v1 keys %v; /apis/apps/v1 %d keys %v; %v", core, r.Code, keysOf("/apis/apps/v1"), names), ""
}

func probeOpenAPI(p *probeEnv) (string, string) {
	v2 := p.do(http.MethodGet, "/openapi/v2", nil, http.Header{"Accept": {"application/json"}})
	var swagger struct {
		Swagger     string                     `json:"swagger"`
		Definitions map[string]json.RawMessage `json:"definitions"`
	}
	_ = json.Unmarshal(v2.Body, &swagger)
	etag := v2.Header.Get("Etag")
	cached := p.do(http.MethodGet, "/openapi/v2", nil, http.Header{"Accept": {"application/json"}, "If-None-Match": {etag}})
	pb := p.do(http.MethodGet, "/openapi/v2", nil, http.Header{"Accept": {"application/com.github.proto-openapi.spec.v2@v1.0+protobuf"}})
	index := p.do(http.MethodGet, "/openapi/v3", nil, nil)
	var idx struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	_ = json.Unmarshal(index.Body, &idx)
	apps := idx.Paths["apis/apps/v1"].ServerRelativeURL
	doc := p.do(http.MethodGet, apps, nil, nil)
	stale := p.do(http.MethodGet, "/openapi/v3/apis/apps/v1?hash=0", nil, nil)
	return fmt.Sprintf("v2 %d %s swagger %s Pod defined=%v etag=%v; If-None-Match %d; protobuf %d %s; "+
		"v3 index %d has api/v1=%v apps/v1=%v; apps doc %d %s %s; stale hash, redirect followed: %d",
		v2.Code, v2.ContentType, swagger.Swagger, swagger.Definitions["io.k8s.api.core.v1.Pod"] != nil, etag != "",
		cached.Code, pb.Code, pb.ContentType, index.Code, idx.Paths["api/v1"].ServerRelativeURL != "", apps != "",
		doc.Code, doc.ContentType, doc.Header.Get("Cache-Control"), stale.Code), ""
}

func probeServerSideApply(p *probeEnv) (string, string) {
	path := "/apis/apps/v1/namespaces/" + p.ns + "/deployments/applied"
	apply := func(manager string, replicas int, query string) rawResponse {
		d := testDeployment(p.ns, "applied", int32(replicas))
		d.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}
		body, _ := json.Marshal(d)
		q := "?fieldManager=" + manager + query
		if manager == "" {
			q = "?" + strings.TrimPrefix(query, "&")
		}
		return p.do(http.MethodPatch, path+q, body, http.Header{"Content-Type": {"application/apply-patch+yaml"}})
	}
	managers := func(r rawResponse) string {
		var d struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
			Spec     struct {
				Replicas int `json:"replicas"`
			} `json:"spec"`
		}
		_ = json.Unmarshal(r.Body, &d)
		var out []string
		for _, m := range d.Metadata.ManagedFields {
			out = append(out, fmt.Sprintf("%s:%s", m.Manager, m.Operation))
		}
		return fmt.Sprintf("%d replicas=%d managers %v", r.Code, d.Spec.Replicas, out)
	}
	created := apply("alice", 2, "")
	var d struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	_ = json.Unmarshal(created.Body, &d)
	owned := "none"
	if len(d.Metadata.ManagedFields) == 1 && d.Metadata.ManagedFields[0].FieldsV1 != nil {
		owned = string(d.Metadata.ManagedFields[0].FieldsV1.Raw)
	}
	again := apply("alice", 2, "")
	conflict := apply("bob", 5, "")
	forced := apply("bob", 5, "&force=true")
	anonymous := apply("", 1, "")
	return fmt.Sprintf("create %s owning %s; same again %d; other manager %s fields=%s; forced %s; no manager %s",
		managers(created), owned, again.Code, statusKey(conflict), causeFields(conflict), managers(forced),
		statusKey(anonymous)), message(conflict)
}

// probeCRD defines a custom resource and uses it: the CRD's status,
// objects stored as sent, the status subresource, generation, printer
// columns, lists, and the patch types custom resources take.
func probeCRD(p *probeEnv) (string, string) {
	group := p.ns + ".example.com"
	crd := fmt.Sprintf(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"gadgets.%[1]s"},
"spec":{"group":"%[1]s","scope":"Namespaced",
 "names":{"plural":"gadgets","singular":"gadget","kind":"Gadget","shortNames":["gd"]},
 "versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}},
  "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}},
  "additionalPrinterColumns":[{"name":"Size","type":"integer","jsonPath":".spec.size"},
   {"name":"Phase","type":"string","jsonPath":".status.phase"}]}]}}`, group)
	crdPath := "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	created := p.do(http.MethodPost, crdPath, []byte(crd), nil)
	defer p.do(http.MethodDelete, crdPath+"/gadgets."+group, nil, nil)
	var status struct {
		Status struct {
			Conditions []struct{ Type, Status string } `json:"conditions"`
		} `json:"status"`
	}
	_ = json.Unmarshal(created.Body, &status)
	gadgets := "/apis/" + group + "/v1/namespaces/" + p.ns + "/gadgets"
	// The real server serves the new resource moments after it answers.
	served := waitUntil(convergeWithin, func() bool { return p.do(http.MethodGet, gadgets, nil, nil).Code == http.StatusOK })
	// It may serve it as soon as the names are accepted, a moment before
	// the CRD reports Established (True only then); a client waits for
	// Established, as `kubectl wait --for condition=established` does.
	var later struct {
		Status struct {
			Conditions []struct{ Type, Status string } `json:"conditions"`
		} `json:"status"`
	}
	waitUntil(convergeWithin, func() bool {
		later.Status.Conditions = nil
		_ = json.Unmarshal(p.do(http.MethodGet, crdPath+"/gadgets."+group, nil, nil).Body, &later)
		for _, c := range later.Status.Conditions {
			if c.Type == "Established" {
				return c.Status == "True"
			}
		}
		return false
	})
	obj := p.do(http.MethodPost, gadgets, []byte(`{"apiVersion":"`+group+`/v1","kind":"Gadget","metadata":{"name":"g1"},"spec":{"size":3},"status":{"phase":"sent"}}`), nil)
	var createdObj struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	_ = json.Unmarshal(obj.Body, &createdObj)
	unconditional := p.do(http.MethodPut, gadgets+"/g1/status", []byte(`{"apiVersion":"`+group+`/v1","kind":"Gadget","metadata":{"name":"g1"},"spec":{"size":99},"status":{"phase":"Ready"}}`), nil)
	st := p.do(http.MethodPut, gadgets+"/g1/status", []byte(`{"apiVersion":"`+group+`/v1","kind":"Gadget","metadata":{"name":"g1","resourceVersion":"`+
		createdObj.Metadata.ResourceVersion+`"},"spec":{"size":99},"status":{"phase":"Ready"}}`), nil)
	merge := p.do(http.MethodPatch, gadgets+"/g1", []byte(`{"spec":{"size":4}}`), http.Header{"Content-Type": {"application/merge-patch+json"}})
	smp := p.do(http.MethodPatch, gadgets+"/g1", []byte(`{"spec":{"size":5}}`), http.Header{"Content-Type": {"application/strategic-merge-patch+json"}})
	var g struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
		Spec     map[string]any    `json:"spec"`
		Status   map[string]any    `json:"status"`
	}
	_ = json.Unmarshal(merge.Body, &g)
	var list struct {
		Kind  string `json:"kind"`
		Items []struct {
			Kind string `json:"kind"`
		} `json:"items"`
	}
	_ = json.Unmarshal(p.do(http.MethodGet, gadgets, nil, nil).Body, &list)
	var kinds []string
	for _, it := range list.Items {
		kinds = append(kinds, it.Kind)
	}
	// The real server publishes the schema moments after it serves the resource.
	schema := strings.Join(reversed(strings.Split(group, ".")), ".") + ".v1.Gadget"
	published := waitUntil(convergeWithin, func() bool {
		var doc struct {
			Components struct {
				Schemas map[string]json.RawMessage `json:"schemas"`
			} `json:"components"`
		}
		r := p.do(http.MethodGet, "/openapi/v3/apis/"+group+"/v1", nil, nil)
		return json.Unmarshal(r.Body, &doc) == nil && doc.Components.Schemas[schema] != nil
	})
	return fmt.Sprintf("CRD %d conditions %v, once served %v; served=%v; schema published=%v; create %d; status write without RV %s, with %d; "+
		"merge %d spec %v status %v generation %d; strategic merge %s; list %s %v; table %s",
		created.Code, status.Status.Conditions, later.Status.Conditions, served, published, obj.Code, statusKey(unconditional), st.Code,
		merge.Code, g.Spec, g.Status, g.Metadata.Generation,
		statusKey(smp), list.Kind, kinds, p.tableKey(gadgets, "g1")), message(smp)
}

// probeFieldValidation sends unknown fields under each fieldValidation
// directive; kubectl apply sends Strict.
func probeFieldValidation(p *probeEnv) (string, string) {
	body := func(name string) []byte {
		return []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `","foo":1},"data":{"a":"b"},"bar":{"x":1}}`)
	}
	path := "/api/v1/namespaces/" + p.ns + "/configmaps"
	strict := p.do(http.MethodPost, path+"?fieldValidation=Strict", body("fv-strict"), nil)
	warn := p.do(http.MethodPost, path, body("fv-warn"), nil)
	ignore := p.do(http.MethodPost, path+"?fieldValidation=Ignore", body("fv-ignore"), nil)
	patch := p.do(http.MethodPatch, path+"/fv-warn?fieldValidation=Strict", []byte(`{"data":{"c":"d"},"zzz":1}`),
		http.Header{"Content-Type": {"application/merge-patch+json"}})
	bad := p.do(http.MethodPost, path+"?fieldValidation=Sometimes", body("fv-bad"), nil)
	return fmt.Sprintf("Strict %s %q; default %d warnings %q; Ignore %d warnings %d; Strict patch %s fields=%s; bad directive %s",
		statusKey(strict), message(strict), warn.Code, warn.Header.Values("Warning"), ignore.Code, len(ignore.Header.Values("Warning")),
		statusKey(patch), causeFields(patch), statusKey(bad)), message(bad)
}

// probeFinalizers deletes an object that has a finalizer, then removes it.
func probeFinalizers(p *probeEnv) (string, string) {
	path := "/api/v1/namespaces/" + p.ns + "/configmaps"
	created := p.do(http.MethodPost, path, []byte(`{"metadata":{"name":"held","finalizers":["example.com/hold"]}}`), nil)
	deleted := p.do(http.MethodDelete, path+"/held", nil, nil)
	var cm corev1.ConfigMap
	_ = json.Unmarshal(deleted.Body, &cm)
	still := p.do(http.MethodGet, path+"/held", nil, nil)
	merge := http.Header{"Content-Type": {"application/merge-patch+json"}}
	added := p.do(http.MethodPatch, path+"/held", []byte(`{"metadata":{"finalizers":["example.com/hold","example.com/more"]}}`), merge)
	released := p.do(http.MethodPatch, path+"/held", []byte(`{"metadata":{"finalizers":null}}`), merge)
	gone := p.do(http.MethodGet, path+"/held", nil, nil)
	return fmt.Sprintf("create %d; DELETE %d deletionTimestamp=%v grace=%d; GET %d; add a finalizer %s; remove the last %d; GET %d",
		created.Code, deleted.Code, cm.DeletionTimestamp != nil, deref(cm.DeletionGracePeriodSeconds), still.Code,
		statusKey(added), released.Code, gone.Code), message(added)
}

// probeDeleteCollection deletes by label selector, and reads the verbs
// discovery advertises.
func probeDeleteCollection(p *probeEnv) (string, string) {
	path := "/api/v1/namespaces/" + p.ns + "/configmaps"
	for _, cm := range []string{`{"metadata":{"name":"dc-a","labels":{"dc":"1"}}}`, `{"metadata":{"name":"dc-b","labels":{"dc":"2"}}}`,
		`{"metadata":{"name":"dc-c","labels":{"dc":"1"}}}`} {
		p.do(http.MethodPost, path, []byte(cm), nil)
	}
	r := p.do(http.MethodDelete, path+"?labelSelector=dc%3D1", nil, nil)
	var list struct {
		Kind  string `json:"kind"`
		Items []struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		} `json:"items"`
	}
	_ = json.Unmarshal(r.Body, &list)
	var names []string
	for _, it := range list.Items {
		names = append(names, it.Metadata.Name)
	}
	left := p.do(http.MethodGet, path+"?labelSelector=dc", nil, nil)
	var leftList metav1.PartialObjectMetadataList
	_ = json.Unmarshal(left.Body, &leftList)
	namespaces := p.do(http.MethodDelete, "/api/v1/namespaces?labelSelector=none", nil, nil)
	allNamespaces := p.do(http.MethodDelete, "/api/v1/configmaps?labelSelector=none", nil, nil)
	verbs := func(path string, names ...string) string {
		var rl metav1.APIResourceList
		_ = json.Unmarshal(p.do(http.MethodGet, path, nil, nil).Body, &rl)
		var out []string
		for _, res := range rl.APIResources {
			for _, n := range names {
				if res.Name == n {
					out = append(out, n+fmt.Sprint(res.Verbs))
				}
			}
		}
		return strings.Join(out, " ")
	}
	return fmt.Sprintf("%d %s %v, left %d; namespaces %s; all namespaces %s; verbs %s %s", r.Code, list.Kind, names, len(leftList.Items),
		statusKey(namespaces), statusKey(allNamespaces), verbs("/api/v1", "pods", "namespaces", "pods/status"),
		verbs("/apis/apps/v1", "deployments", "deployments/scale")), ""
}

// probePodUpdate changes a pod the ways an update may and may not.
func probePodUpdate(p *probeEnv) (string, string) {
	pod := p.pod("immutable", nil)
	path := p.pods() + "/" + pod.Name
	smp := http.Header{"Content-Type": {"application/strategic-merge-patch+json"}}
	image := p.do(http.MethodPatch, path, []byte(`{"spec":{"containers":[{"name":"app","image":"registry.invalid/app:2"}]}}`), smp)
	toleration := p.do(http.MethodPatch, path, []byte(`{"spec":{"tolerations":[{"key":"x","operator":"Exists","effect":"NoSchedule"}]}}`), smp)
	restart := p.do(http.MethodPatch, path, []byte(`{"spec":{"restartPolicy":"Never"}}`), smp)
	label := p.do(http.MethodPatch, path, []byte(`{"metadata":{"labels":{"changed":"yes"}}}`), smp)
	return fmt.Sprintf("image %d; add a toleration %d; restartPolicy %s fields=%s; label %d",
		image.Code, toleration.Code, statusKey(restart), causeFields(restart), label.Code), message(restart)
}

// probeManagedFieldSets compares the exact field sets of a create, of a
// label change by another manager, and of a status write.
func probeManagedFieldSets(p *probeEnv) (string, string) {
	pod := p.pod("fieldsets", map[string]string{"a": "1"})
	changed := pod.DeepCopy()
	changed.Labels["b"] = "2"
	body, _ := json.Marshal(changed)
	updated := p.do(http.MethodPut, p.pods()+"/"+pod.Name+"?fieldManager=labeller", body, nil)
	var got corev1.Pod
	_ = json.Unmarshal(updated.Body, &got)
	got.Status.Message = "written"
	body, _ = json.Marshal(got)
	status := p.do(http.MethodPut, p.pods()+"/"+pod.Name+"/status?fieldManager=statuser", body, nil)
	_ = json.Unmarshal(status.Body, &got)
	var parts []string
	for _, e := range got.ManagedFields {
		raw := ""
		if e.FieldsV1 != nil {
			raw = string(e.FieldsV1.Raw)
		}
		parts = append(parts, fmt.Sprintf("%s/%s/%s %s", e.Manager, e.Operation, e.Subresource, raw))
	}
	return fmt.Sprintf("%d %d; %s", updated.Code, status.Code, strings.Join(parts, "; ")), ""
}

func reversed(parts []string) []string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[len(parts)-1-i] = p
	}
	return out
}
