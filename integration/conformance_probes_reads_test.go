package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer/rest"
)

// Probes of reads: resourceVersion rules, paging, selectors, encodings.

func probeFutureList(p *probeEnv) (string, string) {
	q := url.Values{"resourceVersion": {"999999999"}, "resourceVersionMatch": {"NotOlderThan"}}
	start := time.Now()
	r := p.do(http.MethodGet, p.pods()+"?"+q.Encode(), nil, nil)
	return statusKey(r), fmt.Sprintf("answered after %.1fs", time.Since(start).Seconds())
}

func probeBadResourceVersion(p *probeEnv) (string, string) {
	r := p.do(http.MethodGet, p.pods()+"?resourceVersion=abc", nil, nil)
	return statusKey(r), message(r)
}

func probePagedList(p *probeEnv) (string, string) {
	for _, n := range []string{"page-a", "page-b", "page-c"} {
		p.pod(n, nil)
	}
	r := p.do(http.MethodGet, p.pods()+"?limit=1", nil, nil)
	var list metav1.PartialObjectMetadataList
	if err := json.Unmarshal(r.Body, &list); err != nil {
		p.t.Fatal(err)
	}
	remaining := "unset"
	if list.RemainingItemCount != nil {
		remaining = "set"
	}
	return fmt.Sprintf("%d, items=%d, continue set=%v, remainingItemCount %s", r.Code, len(list.Items),
		list.Continue != "", remaining), ""
}

func probeLabelSelectors(p *probeEnv) (string, string) {
	p.pod("sel-a", map[string]string{"sel": "x", "tier": "front"})
	p.pod("sel-b", map[string]string{"sel": "y"})
	p.pod("sel-c", map[string]string{"sel": "z", "tier": "back"})
	var parts []string
	for _, s := range []string{"sel=x", "sel!=x,sel", "sel in (x,y)", "sel notin (x),sel", "sel,!tier", "sel,tier", "sel=x,tier!=back"} {
		parts = append(parts, s+" → "+p.names(url.Values{"labelSelector": {s}}))
	}
	return strings.Join(parts, "; "), ""
}

func probeFieldSelector(p *probeEnv) (string, string) {
	field := map[string]string{"field": "yes"}
	p.pod("field-a", field)
	p.pod("field-b", field)
	eq := p.names(url.Values{"fieldSelector": {"metadata.name=field-a"}})
	ne := p.names(url.Values{"fieldSelector": {"metadata.name!=field-a"}, "labelSelector": {"field"}})
	return "metadata.name=field-a → " + eq + "; metadata.name!=field-a,field → " + ne, ""
}

func probeCoreFieldSelectors(p *probeEnv) (string, string) {
	lb := testService(p.ns, "fs-lb")
	lb.Spec.Type = corev1.ServiceTypeNodePort
	create(p.t, p.c, lb)
	create(p.t, p.c, testService(p.ns, "fs-plain"))
	create(p.t, p.c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: "fs-custom"}, Type: "example.com/custom"})
	create(p.t, p.c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: "fs-opaque"}, Type: corev1.SecretTypeOpaque})
	names := func(path string) string {
		r := p.do(http.MethodGet, path, nil, nil)
		if r.Code != http.StatusOK {
			return statusKey(r) + " (" + message(r) + ")"
		}
		var list metav1.PartialObjectMetadataList
		if err := json.Unmarshal(r.Body, &list); err != nil {
			p.t.Fatal(err)
		}
		var out []string
		for _, it := range list.Items {
			if strings.HasPrefix(it.Name, "fs-") || it.Name == p.ns {
				out = append(out, it.Name)
			}
		}
		sort.Strings(out)
		return "[" + strings.Join(out, " ") + "]"
	}
	ns := "/api/v1/namespaces/" + p.ns
	return strings.Join([]string{
		"services spec.type=NodePort → " + names(ns+"/services?fieldSelector=spec.type%3DNodePort"),
		"secrets type=example.com/custom → " + names(ns+"/secrets?fieldSelector=type%3Dexample.com%2Fcustom"),
		"namespaces status.phase=Active,metadata.name=" + p.ns + " → " +
			names("/api/v1/namespaces?fieldSelector=status.phase%3DActive,metadata.name%3D"+p.ns),
		"nodes metadata.namespace=x → " + names("/api/v1/nodes?fieldSelector=metadata.namespace%3Dx"),
	}, "; "), ""
}

func probeBadFieldSelector(p *probeEnv) (string, string) {
	r := p.do(http.MethodGet, "/api/v1/namespaces/"+p.ns+"/configmaps?fieldSelector=data.x%3Dy", nil, nil)
	return statusKey(r), message(r)
}

func probeBadLabelSelector(p *probeEnv) (string, string) {
	r := p.do(http.MethodGet, p.pods()+"?labelSelector="+url.QueryEscape("app in ("), nil, nil)
	return statusKey(r), message(r)
}

func probeProtobuf(p *probeEnv) (string, string) {
	h := http.Header{"Accept": {rest.ContentTypeProtobuf}}
	list := p.do(http.MethodGet, p.pods(), nil, h)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := p.c.send(ctx, http.MethodGet, p.pods()+"?watch=true&timeoutSeconds=1", nil, h)
	if err != nil {
		p.t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return fmt.Sprintf("list %d %s; watch %d %s", list.Code, list.ContentType, resp.StatusCode, resp.Header.Get("Content-Type")), ""
}

func probeMetadataList(p *probeEnv) (string, string) {
	p.pod("meta-a", map[string]string{"m": "1"})
	h := http.Header{"Accept": {"application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"}}
	r := p.do(http.MethodGet, p.pods()+"?labelSelector=m", nil, h)
	var list struct {
		Kind, APIVersion string
		Items            []struct {
			Kind, APIVersion string
			Metadata         metav1.ObjectMeta
			Spec             json.RawMessage
		}
	}
	if err := json.Unmarshal(r.Body, &list); err != nil || len(list.Items) != 1 {
		p.t.Fatalf("%d %s", r.Code, r.Body)
	}
	it := list.Items[0]
	return fmt.Sprintf("%d %s %s; item %s %s, labels %v, spec present=%v", r.Code, list.Kind, list.APIVersion,
		it.Kind, it.APIVersion, it.Metadata.Labels, it.Spec != nil), ""
}
