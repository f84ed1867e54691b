package fakeapi

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

const (
	coreEvents = "/api/v1/namespaces/ns/events"
	newEvents  = "/apis/events.k8s.io/v1/namespaces/ns/events"
	hpaV2      = "/apis/autoscaling/v2/namespaces/ns/horizontalpodautoscalers"
	hpaV1      = "/apis/autoscaling/v1/namespaces/ns/horizontalpodautoscalers"
)

// newEvent is an events.k8s.io/v1 Event that passes the API's checks.
func newEvent(name string) *eventsv1.Event {
	return &eventsv1.Event{
		TypeMeta:            metav1.TypeMeta{APIVersion: "events.k8s.io/v1", Kind: "Event"},
		ObjectMeta:          metav1.ObjectMeta{Namespace: "ns", Name: name},
		EventTime:           metav1.NewMicroTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		ReportingController: "example.com/ctl", ReportingInstance: "ctl-0", Action: "Sync", Reason: "Synced",
		Regarding: corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "web"}, Note: "synced web",
		Type: corev1.EventTypeNormal,
	}
}

// send makes a request with a JSON body and decodes a 2xx answer, or
// returns the Status of another as an *apierrors.StatusError.
func send(t *testing.T, srv *Server, method, path, contentType string, body any) (metav1.Object, error) {
	t.Helper()
	data, ok := body.(string)
	if !ok {
		data = jsonBody(t, body)
	}
	if contentType == "" {
		contentType = "application/json"
	}
	code, out, _ := do(t, method, srv.URL()+path, contentType, data)
	if code >= 300 {
		return nil, apierrors.FromObject(decodeStatus(t, out))
	}
	m, err := meta.Accessor(decodeJSON(t, out))
	require.NoError(t, err)
	return m, nil
}

// An Event written through either API reads back through the other, the
// same object at the same resourceVersion, with the real renames.
func TestEventsViewReadsWhatCoreWrote(t *testing.T) {
	srv := startServer(t, Options{})
	createNamespace(t, srv, "ns")

	created, err := send(t, srv, http.MethodPost, newEvents, "", newEvent("new"))
	require.NoError(t, err)
	got, err := send(t, srv, http.MethodGet, coreEvents+"/new", "", "")
	require.NoError(t, err)
	core := got.(*corev1.Event)
	assert.Equal(t, created.GetResourceVersion(), core.ResourceVersion)
	assert.Equal(t, "synced web", core.Message)
	assert.Equal(t, "web", core.InvolvedObject.Name)
	assert.Equal(t, "example.com/ctl", core.ReportingController)

	old := &corev1.Event{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta:     metav1.ObjectMeta{Namespace: "ns", Name: "old"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "web"},
		Message:        "pulled", Reason: "Pulled", Count: 3, Source: corev1.EventSource{Component: "kubelet"}}
	written, err := send(t, srv, http.MethodPost, coreEvents, "", old)
	require.NoError(t, err)
	got, err = send(t, srv, http.MethodGet, newEvents+"/old", "", "")
	require.NoError(t, err)
	shown := got.(*eventsv1.Event)
	assert.Equal(t, written.GetResourceVersion(), shown.ResourceVersion)
	assert.Equal(t, "pulled", shown.Note)
	assert.Equal(t, "web", shown.Regarding.Name)
	assert.Equal(t, int32(3), shown.DeprecatedCount)
	assert.Equal(t, "kubelet", shown.DeprecatedSource.Component)

	code, body, _ := do(t, http.MethodGet, srv.URL()+newEvents, "", "")
	require.Equal(t, http.StatusOK, code)
	list := decodeJSON(t, body).(*eventsv1.EventList)
	require.Len(t, list.Items, 2)
	assert.Equal(t, "pulled", list.Items[1].Note)
	assert.Equal(t, written.GetResourceVersion(), list.ResourceVersion)

	objs, err := srv.Objects(eventsv1.SchemeGroupVersion.WithResource("events"))
	require.NoError(t, err)
	require.Len(t, objs, 2, "the Go API reads through the view too")
	assert.Equal(t, "synced web", objs[0].(*eventsv1.Event).Note)
}

// A watch opened on one version sees writes through the other, at the
// write's resourceVersion; it resumes from a resourceVersion and gets its
// bookmarks in its own version, as a watch on the stored resource does.
func TestEventsViewWatchSeesTheOtherVersion(t *testing.T) {
	srv := startServer(t, Options{})
	createNamespace(t, srv, "ns")
	start := srv.ResourceVersion()
	first, err := send(t, srv, http.MethodPost, newEvents, "", newEvent("a"))
	require.NoError(t, err)

	onNew := openWatch(t, srv.URL()+newEvents+"?watch=true&resourceVersion="+formatRV(start), "")
	ev := nextEvent(t, onNew)
	require.Equal(t, "ADDED a "+first.GetResourceVersion(), eventSummary(ev), "resumed from the resourceVersion")
	require.IsType(t, &eventsv1.Event{}, ev.Object)

	onCore := openWatch(t, srv.URL()+coreEvents+"?watch=true&resourceVersion="+first.GetResourceVersion(), "")
	patched, err := send(t, srv, http.MethodPatch, newEvents+"/a", "application/merge-patch+json",
		`{"series":{"count":2,"lastObservedTime":"2026-01-01T00:01:00.000000Z"}}`)
	require.NoError(t, err)
	ev = nextEvent(t, onCore)
	require.Equal(t, "MODIFIED a "+patched.GetResourceVersion(), eventSummary(ev))
	assert.Equal(t, int32(2), ev.Object.(*corev1.Event).Series.Count, "a patch of the view reaches the stored object")
	ev = nextEvent(t, onNew)
	require.Equal(t, "MODIFIED a "+patched.GetResourceVersion(), eventSummary(ev))
	assert.Equal(t, int32(2), ev.Object.(*eventsv1.Event).Series.Count)

	deleted, err := send(t, srv, http.MethodDelete, coreEvents+"/a", "", "")
	require.NoError(t, err)
	ev = nextEvent(t, onNew)
	require.Equal(t, watch.Deleted, ev.Type)
	require.IsType(t, &eventsv1.Event{}, ev.Object)
	require.NotEqual(t, deleted.GetResourceVersion(), "")

	listWatch := openWatch(t, srv.URL()+newEvents+"?watch=true&sendInitialEvents=true&allowWatchBookmarks=true"+
		"&resourceVersionMatch=NotOlderThan&resourceVersion=", "")
	_, err = send(t, srv, http.MethodPost, coreEvents, "", &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "b"},
		InvolvedObject: corev1.ObjectReference{Namespace: "ns"}})
	require.NoError(t, err)
	bm := nextEvent(t, listWatch)
	require.Equal(t, watch.Bookmark, bm.Type, "nothing to replay: the end of the initial events first")
	require.IsType(t, &eventsv1.Event{}, bm.Object, "a bookmark carries the watched version's kind")
	require.Equal(t, "ADDED b", eventSummary(nextEvent(t, listWatch))[:7])
}

// The strict rules of events.k8s.io/v1 apply to writes through it, with
// the real server's 422, and not to writes through core/v1.
func TestEventsViewValidation(t *testing.T) {
	srv := startServer(t, Options{})
	createNamespace(t, srv, "ns")
	bad := newEvent("bad")
	bad.ReportingController, bad.Type = "", "Odd"
	_, err := send(t, srv, http.MethodPost, newEvents, "", bad)
	require.True(t, apierrors.IsInvalid(err), "%v", err)
	fields := map[string]bool{}
	for _, c := range err.(apierrors.APIStatus).Status().Details.Causes {
		fields[c.Field] = true
	}
	assert.True(t, fields["type"] && fields["reportingController"], "%v", err)
	bad = newEvent("bad")
	bad.EventTime = metav1.MicroTime{}
	_, err = send(t, srv, http.MethodPost, newEvents, "", bad)
	require.True(t, apierrors.IsInvalid(err), "eventTime is required: %v", err)

	_, err = send(t, srv, http.MethodPost, newEvents, "", newEvent("ok"))
	require.NoError(t, err)
	_, err = send(t, srv, http.MethodPatch, newEvents+"/ok", "application/merge-patch+json", `{"note":"changed"}`)
	require.True(t, apierrors.IsInvalid(err), "only the series of an events.k8s.io/v1 Event may change: %v", err)
	_, err = send(t, srv, http.MethodPatch, coreEvents+"/ok", "application/merge-patch+json", `{"message":"changed"}`)
	require.NoError(t, err, "core/v1 keeps its loose rules")
}

func v2HPA() *autoscalingv2.HorizontalPodAutoscaler {
	qps := resource.MustParse("100")
	cpu := int32(50)
	window := int32(120)
	return &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MaxReplicas:    5,
			Metrics: []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Name: "qps"},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &qps}}},
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &cpu}}},
			},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: &window}},
		},
	}
}

// A v2 HPA read through v1 shows its CPU target, and the rest in the real
// annotations; writing that v1 object back loses nothing. A v1 write is
// seen by a v2 watch at its resourceVersion.
func TestHPAViewRoundTrip(t *testing.T) {
	srv := startServer(t, Options{})
	createNamespace(t, srv, "ns")
	created, err := send(t, srv, http.MethodPost, hpaV2, "", v2HPA())
	require.NoError(t, err)

	got, err := send(t, srv, http.MethodGet, hpaV1+"/web", "", "")
	require.NoError(t, err)
	v1 := got.(*autoscalingv1.HorizontalPodAutoscaler)
	assert.Equal(t, created.GetResourceVersion(), v1.ResourceVersion)
	assert.Equal(t, int32(50), *v1.Spec.TargetCPUUtilizationPercentage)
	assert.JSONEq(t, `[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"100"}}]`,
		v1.Annotations["autoscaling.alpha.kubernetes.io/metrics"])
	assert.Contains(t, v1.Annotations["autoscaling.alpha.kubernetes.io/behavior"], `"StabilizationWindowSeconds":120`)

	onV2 := openWatch(t, srv.URL()+hpaV2+"?watch=true&resourceVersion="+created.GetResourceVersion(), "")
	v1.Spec.MaxReplicas = 7
	updated, err := send(t, srv, http.MethodPut, hpaV1+"/web", "", v1)
	require.NoError(t, err)
	ev := nextEvent(t, onV2)
	require.Equal(t, "MODIFIED web "+updated.GetResourceVersion(), eventSummary(ev))
	stored := ev.Object.(*autoscalingv2.HorizontalPodAutoscaler)
	assert.Equal(t, int32(7), stored.Spec.MaxReplicas)
	want := v2HPA().Spec
	want.MaxReplicas = 7
	assert.Equal(t, want, stored.Spec, "the metrics and behavior v1 cannot express came back from the annotations")
	assert.Empty(t, stored.Annotations, "and the annotations are not stored")

	// A v1 HPA with no target has v1's implied 80% CPU.
	bare := &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "bare"},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 3,
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{Kind: "Deployment", Name: "bare"}}}
	_, err = send(t, srv, http.MethodPost, hpaV1, "", bare)
	require.NoError(t, err)
	got, err = send(t, srv, http.MethodGet, hpaV2+"/bare", "", "")
	require.NoError(t, err)
	metrics := got.(*autoscalingv2.HorizontalPodAutoscaler).Spec.Metrics
	require.Len(t, metrics, 1)
	assert.Equal(t, int32(80), *metrics[0].Resource.Target.AverageUtilization)
}

// The views are in discovery as the real server lists them: autoscaling
// prefers v2 and serves v1 too; events.k8s.io/v1 has every verb.
func TestViewsInDiscovery(t *testing.T) {
	srv := startServer(t, Options{})
	code, body, _ := do(t, http.MethodGet, srv.URL()+"/apis/autoscaling", "", "")
	require.Equal(t, http.StatusOK, code)
	var group metav1.APIGroup
	require.NoError(t, json.Unmarshal(body, &group))
	assert.Equal(t, "autoscaling/v2", group.PreferredVersion.GroupVersion)
	require.Len(t, group.Versions, 2)
	assert.Equal(t, "autoscaling/v1", group.Versions[1].GroupVersion)

	// In the aggregated document too, which kubectl reads first.
	code, body, _ = do(t, http.MethodGet, srv.URL()+"/apis", "", "",
		"Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
	require.Equal(t, http.StatusOK, code)
	var aggregated apidiscoveryv2.APIGroupDiscoveryList
	require.NoError(t, json.Unmarshal(body, &aggregated))
	var versions []string
	for _, g := range aggregated.Items {
		if g.Name == "autoscaling" {
			for _, v := range g.Versions {
				versions = append(versions, v.Version)
				require.Len(t, v.Resources, 1)
				assert.Equal(t, "horizontalpodautoscalers", v.Resources[0].Resource)
			}
		}
	}
	assert.Equal(t, []string{"v2", "v1"}, versions, "a group's second version, added after other groups, is listed")

	code, body, _ = do(t, http.MethodGet, srv.URL()+"/apis/events.k8s.io/v1", "", "")
	require.Equal(t, http.StatusOK, code)
	var list metav1.APIResourceList
	require.NoError(t, json.Unmarshal(body, &list))
	require.Len(t, list.APIResources, 1)
	assert.Equal(t, metav1.Verbs{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}, list.APIResources[0].Verbs)
	assert.Equal(t, []string{"ev"}, list.APIResources[0].ShortNames)
}

// The other verbs through a view: server-side apply, a v1 write to
// /status, a field selector (the stored resource's field labels, as on
// the real server), deletecollection, and the Go API.
func TestViewVerbs(t *testing.T) {
	srv := startServer(t, Options{})
	createNamespace(t, srv, "ns")
	applied, err := send(t, srv, http.MethodPatch, newEvents+"/applied?fieldManager=tester", "application/apply-patch+yaml",
		jsonBody(t, newEvent("applied")))
	require.NoError(t, err)
	assert.Equal(t, "events.k8s.io/v1", applied.GetManagedFields()[0].APIVersion, "applied in the view's version")
	core, err := srv.Objects(corev1.SchemeGroupVersion.WithResource("events"))
	require.NoError(t, err)
	require.Len(t, core, 1)
	assert.Equal(t, "synced web", core[0].(*corev1.Event).Message)

	_, err = srv.Create(&corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "other"}, Reason: "Other",
		InvolvedObject: corev1.ObjectReference{Namespace: "ns"}})
	require.NoError(t, err)
	code, body, _ := do(t, http.MethodGet, srv.URL()+newEvents+"?fieldSelector=reason=Other", "", "")
	require.Equal(t, http.StatusOK, code, "%s", body)
	selected := decodeJSON(t, body).(*eventsv1.EventList)
	require.Len(t, selected.Items, 1)
	assert.Equal(t, "other", selected.Items[0].Name)

	// The source of an Event written through events.k8s.io/v1, which has
	// none, is its reporting controller, as on the real server.
	code, body, _ = do(t, http.MethodGet, srv.URL()+coreEvents+"?fieldSelector=source=example.com/ctl", "", "")
	require.Equal(t, http.StatusOK, code, "%s", body)
	bySource := decodeJSON(t, body).(*corev1.EventList)
	require.Len(t, bySource.Items, 1)
	assert.Equal(t, "applied", bySource.Items[0].Name)

	// Protobuf too, in the view's version.
	code, body, _ = do(t, http.MethodGet, srv.URL()+newEvents+"/other", "", "", "Accept", "application/vnd.kubernetes.protobuf")
	require.Equal(t, http.StatusOK, code)
	info, ok := runtime.SerializerInfoForMediaType(testCodecs.SupportedMediaTypes(), "application/vnd.kubernetes.protobuf")
	require.True(t, ok)
	decoded, _, err := info.Serializer.Decode(body, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, "Other", decoded.(*eventsv1.Event).Reason)

	gone, err := send(t, srv, http.MethodDelete, newEvents+"/other", "", "")
	require.NoError(t, err)
	require.IsType(t, &eventsv1.Event{}, gone, "DELETE answers the final state in the view's version")
	_, err = srv.Create(&corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "other"},
		InvolvedObject: corev1.ObjectReference{Namespace: "ns"}})
	require.NoError(t, err)

	code, body, _ = do(t, http.MethodDelete, srv.URL()+newEvents, "", "")
	require.Equal(t, http.StatusOK, code, "%s", body)
	assert.Len(t, decodeJSON(t, body).(*eventsv1.EventList).Items, 2, "the deleted, in the view's list kind")
	core, err = srv.Objects(corev1.SchemeGroupVersion.WithResource("events"))
	require.NoError(t, err)
	assert.Empty(t, core)

	stored, err := srv.Create(&autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "h"},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 2, TargetCPUUtilizationPercentage: new(int32(70))}})
	require.NoError(t, err)
	h := stored.(*autoscalingv1.HorizontalPodAutoscaler)
	h.Status.CurrentReplicas, h.Status.CurrentCPUUtilizationPercentage = 2, new(int32(65))
	_, err = send(t, srv, http.MethodPut, hpaV1+"/h/status", "", h)
	require.NoError(t, err)
	got, err := send(t, srv, http.MethodGet, hpaV2+"/h", "", "")
	require.NoError(t, err)
	v2 := got.(*autoscalingv2.HorizontalPodAutoscaler)
	assert.Equal(t, int32(2), v2.Status.CurrentReplicas)
	require.Len(t, v2.Status.CurrentMetrics, 1)
	assert.Equal(t, int32(65), *v2.Status.CurrentMetrics[0].Resource.Current.AverageUtilization)
	assert.Equal(t, int32(70), *v2.Spec.Metrics[0].Resource.Target.AverageUtilization)
	require.NoError(t, srv.Delete(h))
	_, err = send(t, srv, http.MethodGet, hpaV2+"/h", "", "")
	assert.True(t, apierrors.IsNotFound(err))
}
