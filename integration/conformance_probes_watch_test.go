package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Probes of watches: WatchList, bookmarks, selector moves, deletes, and
// what a compacted history answers.

func probeWatchListInvalid(p *probeEnv) (string, string) {
	res := p.watch(url.Values{"sendInitialEvents": {"true"}, "allowWatchBookmarks": {"true"}}, nil, untilAny, 10*time.Second)
	if res.Code != http.StatusOK {
		r := rawResponse{Code: res.Code, Body: res.Body}
		return statusKey(r), message(r)
	}
	return "200 " + countedTypes(res.Events), ""
}

// ownNamespace moves the probe to a new namespace of its own, seeded with
// three pods, for probes that count everything in it.
func (p *probeEnv) ownNamespace(suffix string) {
	p.ns += "-" + suffix
	create(p.t, p.c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.ns}})
	for _, n := range []string{"wl-a", "wl-b", "wl-c"} {
		p.pod(n, nil)
	}
}

func watchListQuery() url.Values {
	return url.Values{"sendInitialEvents": {"true"}, "allowWatchBookmarks": {"true"},
		"resourceVersionMatch": {"NotOlderThan"}, "resourceVersion": {""}}
}

func probeWatchList(p *probeEnv) (string, string) {
	p.ownNamespace("wl")
	res := p.watch(watchListQuery(), nil, untilType("BOOKMARK"), 20*time.Second)
	if len(res.Events) == 0 {
		return fmt.Sprintf("%d, no events", res.Code), ""
	}
	last := res.Events[len(res.Events)-1]
	return fmt.Sprintf("%d %s; end annotation %q", res.Code, countedTypes(res.Events),
		last.meta().Annotations[metav1.InitialEventsAnnotationKey]), ""
}

// probeBookmarkShape shows the bookmark object with its resourceVersion
// blanked: kind, apiVersion, which fields are present.
func probeBookmarkShape(p *probeEnv) (string, string) {
	p.ownNamespace("shape")
	res := p.watch(watchListQuery(), nil, untilType("BOOKMARK"), 20*time.Second)
	if len(res.Events) == 0 {
		return "no bookmark", ""
	}
	var obj map[string]any
	if err := json.Unmarshal(res.Events[len(res.Events)-1].Object, &obj); err != nil {
		p.t.Fatal(err)
	}
	if m, ok := obj["metadata"].(map[string]any); ok && m["resourceVersion"] != nil {
		m["resourceVersion"] = "N"
	}
	shape, _ := json.Marshal(obj) // encoding/json sorts map keys
	return string(shape), "resourceVersion replaced by N"
}

// probeWatchFromZero watches from resourceVersion 0, "any version": the real
// server answers from its watch cache, which can lag the writes just made.
// Once it lagged the third pod under load and sent ADDED×2, BOOKMARK, ADDED:
// a true answer, but about timing, not the protocol. So the probe first waits
// until a list at resourceVersion 0, served from that cache, shows all three.
func probeWatchFromZero(p *probeEnv) (string, string) {
	p.ownNamespace("zero")
	all := "[wl-a wl-b wl-c]"
	if !waitUntil(20*time.Second, func() bool { return p.names(url.Values{"resourceVersion": {"0"}}) == all }) {
		p.t.Fatalf("a list at resourceVersion 0 never showed %s", all)
	}
	q := url.Values{"resourceVersion": {"0"}, "timeoutSeconds": {"1"}, "allowWatchBookmarks": {"true"}}
	res := p.watch(q, nil, nil, 20*time.Second)
	return fmt.Sprintf("%d %s; stream ended at timeoutSeconds=%v", res.Code, countedTypes(res.Events), res.Ended), ""
}

func probeMoveOut(p *probeEnv) (string, string) {
	pod := p.pod("mover", map[string]string{"move": "in"})
	var updated *corev1.Pod
	q := url.Values{"resourceVersion": {pod.ResourceVersion}, "labelSelector": {"move=in"}}
	res := p.watch(q, func() {
		moved := pod.DeepCopy()
		moved.Labels = map[string]string{"move": "out"}
		updated = update(p.t, p.c, moved)
	}, untilAny, 20*time.Second)
	if len(res.Events) == 0 {
		return fmt.Sprintf("%d, no event", res.Code), ""
	}
	ev := res.Events[0]
	m := ev.meta()
	return fmt.Sprintf("%s; object labels %v; object RV = the update's: %v", ev.Type, m.Labels,
		m.ResourceVersion == updated.ResourceVersion), ""
}

func probeDeleteEvent(p *probeEnv) (string, string) {
	pod := p.pod("doomed", nil)
	q := url.Values{"resourceVersion": {pod.ResourceVersion}, "fieldSelector": {"metadata.name=doomed"}}
	var answer corev1.Pod
	res := p.watch(q, func() {
		r := p.do(http.MethodDelete, p.pods()+"/doomed", nil, nil)
		_ = json.Unmarshal(r.Body, &answer)
	}, untilType("DELETED"), 20*time.Second)
	if len(res.Events) == 0 {
		return fmt.Sprintf("%d, no event", res.Code), ""
	}
	ev := res.Events[len(res.Events)-1]
	m := ev.meta()
	return fmt.Sprintf("%s; object RV newer than the last write: %v; = the DELETE answer's: %v",
		countedTypes(res.Events), m.ResourceVersion != pod.ResourceVersion, m.ResourceVersion == answer.ResourceVersion), ""
}

// compacted writes twice after a list and compacts: the list's RV is then
// gone (a watch from it would start at the first write, which is compacted).
func (p *probeEnv) compacted() string {
	rv := p.listRV()
	p.pod(fmt.Sprintf("gone-%d", time.Now().UnixNano()), nil)
	p.pod(fmt.Sprintf("gone-%d", time.Now().UnixNano()), nil)
	p.srv.compact(p.t)
	return rv
}

func probeWatchCompacted(p *probeEnv) (string, string) {
	rv := p.compacted()
	res := p.watch(url.Values{"resourceVersion": {rv}}, nil, untilAny, 20*time.Second)
	if res.Code != http.StatusOK {
		r := rawResponse{Code: res.Code, Body: res.Body}
		return "HTTP " + statusKey(r), message(r)
	}
	if len(res.Events) == 0 {
		return "200, no event", ""
	}
	st := res.Events[0].status()
	return fmt.Sprintf("HTTP 200, first event %s %d %s", res.Events[0].Type, st.Code, st.Reason), st.Message
}

func probeListCompacted(p *probeEnv) (string, string) {
	rv := p.compacted()
	q := url.Values{"resourceVersion": {rv}, "resourceVersionMatch": {"Exact"}}
	r := p.do(http.MethodGet, p.pods()+"?"+q.Encode(), nil, nil)
	return statusKey(r), message(r)
}

func probeContinueCompacted(p *probeEnv) (string, string) {
	p.pod("cont-a", nil)
	p.pod("cont-b", nil)
	var first metav1.PartialObjectMetadataList
	r := p.do(http.MethodGet, p.pods()+"?limit=1", nil, nil)
	if err := json.Unmarshal(r.Body, &first); err != nil || first.Continue == "" {
		p.t.Fatalf("first page: %d %s", r.Code, r.Body)
	}
	p.pod("cont-c", nil)
	p.pod("cont-d", nil)
	p.srv.compact(p.t)
	r = p.do(http.MethodGet, p.pods()+"?limit=1&continue="+url.QueryEscape(first.Continue), nil, nil)
	return statusKey(r), message(r)
}
