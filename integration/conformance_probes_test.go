package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer/reflector/wire"
)

// A probe sends the same raw request(s) to each server and reduces the answer
// to a key (what must be equal between the servers: codes, reasons, kinds,
// event types, which objects a selector picks) and a note (shown, not
// compared: messages, timings). Probes see the protocol itself, below
// anything our client could smooth over.
type probe struct {
	name string
	// history: the probe compacts the server's history and needs its
	// watches and lists to notice (target.history).
	history bool
	run     func(p *probeEnv) (key, note string)
}

// probeEnv is one probe's namespace on one server.
type probeEnv struct {
	t   *testing.T
	c   *apiClient
	srv *apiServer
	ns  string
}

// knownDifferences lists the probes on which fakeapi is known to answer
// otherwise than kube-apiserver, each with the reason it stays so. A
// difference not listed fails TestConformance; so does a listed one that has
// gone away. docs/fakeapi.md explains each at more length.
var knownDifferences = map[string]string{
	"POST into a namespace that does not exist": "fakeapi has no namespace lifecycle: it accepts objects in any namespace, so tests need no setup",
	"POST a pod without containers":             "fakeapi validates metadata only, not specs: tests may store the smallest objects that serve their point",
}

var probes = []probe{
	{name: "GET a missing pod", run: probeGetMissing},
	{name: "POST a pod that exists", run: probeCreateExisting},
	{name: "PUT with a stale resourceVersion", run: probeStaleUpdate},
	{name: "DELETE a missing pod", run: probeDeleteMissing},
	{name: "DELETE with a stale resourceVersion precondition", run: probeStaleDelete},
	{name: "POST a body of another kind", run: probeKindMismatch},
	{name: "POST an invalid name", run: probeInvalidName},
	{name: "POST a pod without containers", run: probeInvalidSpec},
	{name: "GET an unknown resource", run: probeUnknownResource},
	{name: "Accept: a media type the server cannot produce", run: probeNotAcceptable},
	{name: "PATCH (merge) a label", run: probeMergePatch},
	{name: "PUT /status with a changed label and status", run: probeStatusSubresource},
	{name: "DELETE a pod: the answer", run: probeDeleteAnswer},
	{name: "POST into a namespace that does not exist", run: probeMissingNamespace},
	{name: "list at a resourceVersion not reached yet", run: probeFutureList},
	{name: "list with limit=1", run: probePagedList},
	{name: "label selectors (equality, set-based, existence)", run: probeLabelSelectors},
	{name: "field selector metadata.name", run: probeFieldSelector},
	{name: "field selectors of core kinds (services, secrets, namespaces, nodes)", run: probeCoreFieldSelectors},
	{name: "unsupported field selector", run: probeBadFieldSelector},
	{name: "malformed label selector", run: probeBadLabelSelector},
	{name: "sendInitialEvents without resourceVersionMatch", run: probeWatchListInvalid},
	{name: "WatchList: initial events, then the end bookmark", run: probeWatchList},
	{name: "bookmark object shape", run: probeBookmarkShape},
	{name: "watch from resourceVersion 0", run: probeWatchFromZero},
	{name: "watch: label changed out of the selector", run: probeMoveOut},
	{name: "watch: delete event", run: probeDeleteEvent},
	{name: "watch from a compacted resourceVersion", history: true, run: probeWatchCompacted},
	{name: "exact list at a compacted resourceVersion", history: true, run: probeListCompacted},
	{name: "continue a paged list after compaction", history: true, run: probeContinueCompacted},
	{name: "protobuf negotiation (list, watch)", run: probeProtobuf},
	{name: "metadata-only list (as=PartialObjectMetadataList)", run: probeMetadataList},
	{name: "managedFields after create", run: probeManagedFields},
	{name: "PUT of an unchanged object", run: probeNoopUpdate},
	{name: "metadata.generation after create", run: probeGeneration},
	{name: "namespace after create: what the server adds", run: probeNamespaceDefaults},
	{name: "wrong bearer token", run: probeWrongToken},
}

// runProbes runs every probe against the target, each as a subtest, in two
// namespaces (one on the history server), and records the answers.
func runProbes(t *testing.T, tg *target, table *conformanceTable) {
	mainNS, historyNS := "conf-probes", "conf-probes-history"
	create(t, tg.main.client, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: mainNS}})
	create(t, tg.history.client, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: historyNS}})
	for _, pr := range probes {
		var answer probeCell
		ok := t.Run("probe "+pr.name, func(t *testing.T) {
			p := &probeEnv{t: t, c: tg.main.client, srv: tg.main, ns: mainNS}
			if pr.history {
				p.c, p.srv, p.ns = tg.history.client, tg.history, historyNS
			}
			answer.Key, answer.Note = pr.run(p)
			t.Logf("%s: %s (%s)", tg.name, answer.Key, answer.Note)
		})
		answer.Failed = !ok
		table.setProbe(pr.name, tg.name, answer)
	}
}

// ---------------------------------------------------------------- helpers

func (p *probeEnv) pods() string { return "/api/v1/namespaces/" + p.ns + "/pods" }

// pod creates a pod in the probe's namespace.
func (p *probeEnv) pod(name string, labels map[string]string) *corev1.Pod {
	return create(p.t, p.c, testPod(p.ns, name, labels))
}

func (p *probeEnv) do(method, pathAndQuery string, body []byte, header http.Header) rawResponse {
	p.t.Helper()
	resp, err := p.c.raw(method, pathAndQuery, body, header)
	if err != nil {
		p.t.Fatal(err)
	}
	return resp
}

// statusKey reduces an error answer to what clients branch on: the HTTP
// code, the Status reason, its cause reasons and the details' kind.
func statusKey(r rawResponse) string {
	st, ok := r.status()
	if !ok {
		return fmt.Sprintf("%d (no Status body: %.60q)", r.Code, r.Body)
	}
	key := fmt.Sprintf("%d %s", r.Code, st.Reason)
	if st.Code != int32(r.Code) {
		key += fmt.Sprintf(" (Status.code %d)", st.Code)
	}
	if d := st.Details; d != nil {
		var causes []string
		for _, c := range d.Causes {
			causes = append(causes, string(c.Type))
		}
		if len(causes) > 0 {
			key += " causes=" + strings.Join(causes, ",")
		}
		if d.Kind != "" {
			key += " kind=" + d.Kind
		}
		if d.RetryAfterSeconds > 0 {
			key += fmt.Sprintf(" retryAfter=%ds", d.RetryAfterSeconds)
		}
	}
	return key
}

func message(r rawResponse) string {
	st, _ := r.status()
	return st.Message
}

// listRV lists the probe's pods and returns the list's resourceVersion.
func (p *probeEnv) listRV() string {
	p.t.Helper()
	var list metav1.PartialObjectMetadataList
	r := p.do(http.MethodGet, p.pods(), nil, nil)
	if err := json.Unmarshal(r.Body, &list); err != nil || r.Code != http.StatusOK {
		p.t.Fatalf("list: %d %s", r.Code, r.Body)
	}
	return list.ResourceVersion
}

// names lists the probe's pods with query and returns their sorted names.
func (p *probeEnv) names(query url.Values) string {
	p.t.Helper()
	r := p.do(http.MethodGet, p.pods()+"?"+query.Encode(), nil, nil)
	if r.Code != http.StatusOK {
		return statusKey(r)
	}
	var list metav1.PartialObjectMetadataList
	if err := json.Unmarshal(r.Body, &list); err != nil {
		p.t.Fatal(err)
	}
	var names []string
	for _, item := range list.Items {
		names = append(names, item.Name)
	}
	sort.Strings(names)
	return "[" + strings.Join(names, " ") + "]"
}

// rawEvent is one JSON watch frame, its object kept as bytes.
type rawEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

func (ev rawEvent) meta() metav1.ObjectMeta {
	var obj struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
		Code     int               `json:"code"`
	}
	_ = json.Unmarshal(ev.Object, &obj)
	return obj.Metadata
}

func (ev rawEvent) status() metav1.Status {
	var st metav1.Status
	_ = json.Unmarshal(ev.Object, &st)
	return st
}

// watchResult is what a watch request produced: its HTTP answer and the
// events read before stop said enough, the stream ended, or the time ran out.
type watchResult struct {
	Code        int
	ContentType string
	Events      []rawEvent
	Ended       bool // the server closed the stream
	Body        []byte
}

// watch opens a JSON watch and reads events until stop returns true (stop
// may be nil: read until the stream ends), for at most limit.
func (p *probeEnv) watch(query url.Values, start func(), stop func([]rawEvent) bool, limit time.Duration) watchResult {
	p.t.Helper()
	query.Set("watch", "true")
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	resp, err := p.c.send(ctx, http.MethodGet, p.pods()+"?"+query.Encode(), nil, nil)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	res := watchResult{Code: resp.StatusCode, ContentType: resp.Header.Get("Content-Type")}
	if resp.StatusCode != http.StatusOK {
		res.Body, _ = io.ReadAll(resp.Body)
		return res
	}
	if start != nil {
		start()
	}
	dec := json.NewDecoder(resp.Body)
	for stop == nil || !stop(res.Events) {
		var ev rawEvent
		if err := dec.Decode(&ev); err != nil {
			res.Ended = errors.Is(err, io.EOF)
			if !res.Ended && ctx.Err() == nil {
				p.t.Fatalf("watch: %v", err)
			}
			return res
		}
		res.Events = append(res.Events, ev)
	}
	return res
}

func countedTypes(events []rawEvent) string {
	var parts []string
	for i := 0; i < len(events); {
		j := i
		for j < len(events) && events[j].Type == events[i].Type {
			j++
		}
		if j-i > 1 {
			parts = append(parts, fmt.Sprintf("%s×%d", events[i].Type, j-i))
		} else {
			parts = append(parts, events[i].Type)
		}
		i = j
	}
	return strings.Join(parts, ", ")
}

func untilType(typ string) func([]rawEvent) bool {
	return func(evs []rawEvent) bool { return len(evs) > 0 && evs[len(evs)-1].Type == typ }
}

func untilAny(evs []rawEvent) bool { return len(evs) > 0 }

// ---------------------------------------------------------------- errors

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

func probeFutureList(p *probeEnv) (string, string) {
	q := url.Values{"resourceVersion": {"999999999"}, "resourceVersionMatch": {"NotOlderThan"}}
	start := time.Now()
	r := p.do(http.MethodGet, p.pods()+"?"+q.Encode(), nil, nil)
	return statusKey(r), fmt.Sprintf("answered after %.1fs", time.Since(start).Seconds())
}

// ---------------------------------------------------------------- lists and selectors

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

func probeBadFieldSelector(p *probeEnv) (string, string) {
	r := p.do(http.MethodGet, "/api/v1/namespaces/"+p.ns+"/configmaps?fieldSelector=data.x%3Dy", nil, nil)
	return statusKey(r), message(r)
}

func probeBadLabelSelector(p *probeEnv) (string, string) {
	r := p.do(http.MethodGet, p.pods()+"?labelSelector="+url.QueryEscape("app in ("), nil, nil)
	return statusKey(r), message(r)
}

// ---------------------------------------------------------------- watches

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

func probeWatchFromZero(p *probeEnv) (string, string) {
	p.ownNamespace("zero")
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

// ---------------------------------------------------------------- encodings

func probeProtobuf(p *probeEnv) (string, string) {
	h := http.Header{"Accept": {wire.ContentTypeProtobuf}}
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

func probeWrongToken(p *probeEnv) (string, string) {
	r := p.do(http.MethodGet, p.pods(), nil, http.Header{"Authorization": {"Bearer wrong"}})
	return statusKey(r), message(r)
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

func probeUnknownResource(p *probeEnv) (string, string) {
	r := p.do(http.MethodGet, "/api/v1/namespaces/"+p.ns+"/widgets", nil, nil)
	return statusKey(r), message(r)
}

func probeNotAcceptable(p *probeEnv) (string, string) {
	r := p.do(http.MethodGet, p.pods(), nil, http.Header{"Accept": {"text/csv"}})
	return statusKey(r), message(r)
}

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
