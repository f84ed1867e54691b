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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
var knownDifferences = map[string]string{}

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
	{name: "list at a resourceVersion that is not a number", run: probeBadResourceVersion},
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
	{name: "managedFields field sets: create, label update, status write", run: probeManagedFieldSets},
	{name: "PUT of an unchanged object", run: probeNoopUpdate},
	{name: "metadata.generation after create", run: probeGeneration},
	{name: "namespace after create: what the server adds", run: probeNamespaceDefaults},
	{name: "wrong bearer token", run: probeWrongToken},
	{name: "PATCH (strategic merge) one container's image", run: probeStrategicMergePatch},
	{name: "PATCH (JSON patch), and patch errors", run: probeJSONPatch},
	{name: "pod after create: what the server adds", run: probePodDefaults},
	{name: "POST a pod without an image", run: probeInvalidImage},
	{name: "pod updates: image, toleration, restartPolicy, label", run: probePodUpdate},
	{name: "field selector status.phase=Pending (watch, list)", run: probePhaseSelector},
	{name: "events: create, list by involvedObject", run: probeEvents},
	{name: "deployment /scale: GET, PATCH", run: probeScale},
	{name: "aggregated discovery (apidiscovery.k8s.io/v2)", run: probeAggregatedDiscovery},
	{name: "a path in an unknown group", run: probeUnknownGroup},
	{name: "APIResourceList shape", run: probeResourceListShape},
	{name: "OpenAPI v2 and v3", run: probeOpenAPI},
	{name: "server-side apply: create, no-op, conflict, force", run: probeServerSideApply},
	{name: "unknown fields under fieldValidation Strict, Warn, Ignore", run: probeFieldValidation},
	{name: "finalizers hold a deletion", run: probeFinalizers},
	{name: "deletecollection, and the verbs in discovery", run: probeDeleteCollection},
	{name: "CustomResourceDefinition: serve, status, columns, lists", run: probeCRD},
	{name: "Table output (kubectl get) of pods, deployments, replicasets, services, namespaces, events", run: probeTables},
	{name: "PUT of the creating manifest (pod, Service)", run: probeNoopManifest},
	{name: "server-side apply with an undeclared field", run: probeApplyUndeclared},
	{name: "406 that explains: no details", run: probeNotAcceptableDetails},
	{name: "owners after patch, set image and /scale; apply of the first manifest", run: probeScaleOwners},
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
