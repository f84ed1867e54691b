package fakeapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// coreEvent is newEvent as a core/v1 Event.
func coreEvent(name string) *corev1.Event {
	ev := newEvent(name)
	return &corev1.Event{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Event"}, ObjectMeta: ev.ObjectMeta,
		InvolvedObject: ev.Regarding, Reason: ev.Reason, Message: ev.Note, EventTime: ev.EventTime,
		ReportingController: ev.ReportingController, ReportingInstance: ev.ReportingInstance, Action: ev.Action, Type: ev.Type}
}

// managers maps each managedFields entry's manager to its apiVersion.
func managers(m metav1.Object) map[string]string {
	out := map[string]string{}
	for _, e := range m.GetManagedFields() {
		out[e.Manager] = e.APIVersion
	}
	return out
}

// An apply through one version of an Event meets the owners who wrote
// through the other, as on the real server: a conflicting field is a 409,
// and the other owners keep their entries.
func TestEventsApplyAcrossVersionsKeepsOwners(t *testing.T) {
	srv := startServer(t, Options{})
	createNamespace(t, srv, "ns")
	core := coreEvent("x")
	core.Labels = map[string]string{"a": "1"}
	_, err := send(t, srv, http.MethodPatch, coreEvents+"/x?fieldManager=creator", "application/apply-patch+yaml", core)
	require.NoError(t, err)

	ev := newEvent("x")
	ev.Labels = map[string]string{"a": "2"}
	_, err = send(t, srv, http.MethodPatch, newEvents+"/x?fieldManager=applier", "application/apply-patch+yaml", ev)
	require.True(t, apierrors.IsConflict(err), "a label the core/v1 owner set is a conflict through events.k8s.io/v1: %v", err)

	ev.Labels = map[string]string{"b": "2"}
	got, err := send(t, srv, http.MethodPatch, newEvents+"/x?fieldManager=applier", "application/apply-patch+yaml", ev)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a": "1", "b": "2"}, got.GetLabels())
	assert.Equal(t, map[string]string{"creator": "v1", "applier": "events.k8s.io/v1"}, managers(got))

	// And the other way round: an apply through core/v1 over an
	// events.k8s.io/v1 owner.
	core.Labels = map[string]string{"b": "3"}
	_, err = send(t, srv, http.MethodPatch, coreEvents+"/x?fieldManager=creator", "application/apply-patch+yaml", core)
	require.True(t, apierrors.IsConflict(err), "a label the events.k8s.io/v1 owner set is a conflict through core/v1: %v", err)
}

// An apply through autoscaling/v1 over an HPA that autoscaling/v2
// managers own converts between the versions: a field the other owns is a
// conflict, force takes it, and the other's entry stays.
func TestHPAApplyAcrossVersions(t *testing.T) {
	srv := startServer(t, Options{})
	createNamespace(t, srv, "ns")
	_, err := send(t, srv, http.MethodPatch, hpaV2+"/web?fieldManager=v2owner", "application/apply-patch+yaml", v2HPA())
	require.NoError(t, err)

	h1 := &autoscalingv1.HorizontalPodAutoscaler{TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", Labels: map[string]string{"team": "a"}},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 9,
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{Kind: "Deployment", Name: "web", APIVersion: "apps/v1"}}}
	_, err = send(t, srv, http.MethodPatch, hpaV1+"/web?fieldManager=v1owner", "application/apply-patch+yaml", h1)
	require.True(t, apierrors.IsConflict(err), "maxReplicas is the v2 owner's: %v", err)

	got, err := send(t, srv, http.MethodPatch, hpaV1+"/web?fieldManager=v1owner&force=true", "application/apply-patch+yaml", h1)
	require.NoError(t, err)
	assert.Equal(t, int32(9), got.(*autoscalingv1.HorizontalPodAutoscaler).Spec.MaxReplicas)
	assert.Equal(t, map[string]string{"v2owner": "autoscaling/v2", "v1owner": "autoscaling/v1"}, managers(got))
}

// fieldsOf is the managedFields entry of manager, or fails the test.
func fieldsOf(t *testing.T, m metav1.Object, manager string) metav1.ManagedFieldsEntry {
	t.Helper()
	for _, e := range m.GetManagedFields() {
		if e.Manager == manager {
			return e
		}
	}
	t.Fatalf("no managedFields entry of %q in %+v", manager, m.GetManagedFields())
	return metav1.ManagedFieldsEntry{}
}

// A create, update or patch through a view is tracked in the view's
// version, with the view's paths, as the real server tracks a write in
// the version of the request.
func TestViewWritesTrackedInTheViewsVersion(t *testing.T) {
	srv := startServer(t, Options{})
	createNamespace(t, srv, "ns")
	_, err := send(t, srv, http.MethodPatch, hpaV2+"/web?fieldManager=v2owner", "application/apply-patch+yaml", v2HPA())
	require.NoError(t, err)
	_, err = send(t, srv, http.MethodPatch, hpaV1+"/web?fieldManager=patcher", "application/merge-patch+json",
		`{"spec":{"targetCPUUtilizationPercentage":60}}`)
	require.NoError(t, err)
	got, err := send(t, srv, http.MethodGet, hpaV2+"/web", "", "")
	require.NoError(t, err)
	e := fieldsOf(t, got, "patcher")
	assert.Equal(t, "autoscaling/v1", e.APIVersion)
	assert.Equal(t, metav1.ManagedFieldsOperationUpdate, e.Operation)
	assert.Contains(t, string(e.FieldsV1.Raw), `"f:targetCPUUtilizationPercentage"`, "a v1 path")
	assert.Equal(t, "autoscaling/v2", fieldsOf(t, got, "v2owner").APIVersion)

	_, err = send(t, srv, http.MethodPost, newEvents+"?fieldManager=maker", "", newEvent("x"))
	require.NoError(t, err)
	got, err = send(t, srv, http.MethodGet, coreEvents+"/x", "", "")
	require.NoError(t, err)
	e = fieldsOf(t, got, "maker")
	assert.Equal(t, "events.k8s.io/v1", e.APIVersion)
	assert.Contains(t, string(e.FieldsV1.Raw), `"f:note"`, "an events.k8s.io/v1 path")
	assert.NotContains(t, string(e.FieldsV1.Raw), `"f:message"`)
}

// The events.k8s.io/v1 view selects with its own field labels, renamed to
// the stored core/v1 ones as the real server's field label conversion
// does, in lists and watches; a core/v1 label whose field the view renamed
// is refused with the real 400.
func TestEventsViewFieldSelectors(t *testing.T) {
	srv := startServer(t, Options{})
	createNamespace(t, srv, "ns")
	created, err := send(t, srv, http.MethodPost, newEvents, "", newEvent("a"))
	require.NoError(t, err)
	other := newEvent("b")
	other.Regarding.Name, other.ReportingController, other.Type = "db", "example.com/other", corev1.EventTypeWarning
	_, err = send(t, srv, http.MethodPost, newEvents, "", other)
	require.NoError(t, err)

	for sel, want := range map[string][]string{
		"regarding.name=web":                     {"a"},
		"regarding.kind=Pod,regarding.name!=web": {"b"},
		"reportingController=example.com/ctl":    {"a"},
		"type=Warning":                           {"b"},
		"reason=Synced,metadata.name=b":          {"b"},
		"source=example.com/other":               {"b"},
		"metadata.namespace=ns,regarding.uid=":   {"a", "b"},
	} {
		code, body, _ := do(t, http.MethodGet, srv.URL()+newEvents+"?fieldSelector="+sel, "", "")
		require.Equal(t, http.StatusOK, code, "%s: %s", sel, body)
		list := decodeJSON(t, body).(*eventsv1.EventList)
		var names []string
		for _, item := range list.Items {
			names = append(names, item.Name)
		}
		assert.ElementsMatch(t, want, names, sel)
	}
	for _, sel := range []string{"involvedObject.name=web", "reportingComponent=example.com/ctl", "note=x"} {
		_, err := send(t, srv, http.MethodGet, newEvents+"?fieldSelector="+sel, "", "")
		require.True(t, apierrors.IsBadRequest(err), "%s: %v", sel, err)
		assert.Equal(t, "field label not supported: "+strings.SplitN(sel, "=", 2)[0], err.Error())
	}
	// core/v1 keeps its labels.
	code, body, _ := do(t, http.MethodGet, srv.URL()+coreEvents+"?fieldSelector=involvedObject.name=web", "", "")
	require.Equal(t, http.StatusOK, code, string(body))
	_, err = send(t, srv, http.MethodGet, coreEvents+"?fieldSelector=regarding.name=web", "", "")
	require.True(t, apierrors.IsBadRequest(err), "%v", err)

	// A watch on the view selects the same way.
	web, db := newEvent("c"), newEvent("d")
	db.Regarding.Name = "db"
	for _, ev := range []*eventsv1.Event{web, db} {
		_, err = send(t, srv, http.MethodPost, newEvents, "", ev)
		require.NoError(t, err)
	}
	w := openWatch(t, srv.URL()+newEvents+"?watch=true&fieldSelector=regarding.name=db&resourceVersion="+created.GetResourceVersion(), "")
	for _, want := range []string{"b", "d"} {
		ev := nextEvent(t, w)
		assert.Equal(t, want, ev.Object.(*eventsv1.Event).Name)
	}
}

// A write through autoscaling/v2 does not keep the annotations in which
// autoscaling/v1 carries what it has no field for, as the real server's v2
// decoding drops them, whether the write is a create, a patch or an
// apply; so they cannot override the fields on a v1 read. Other
// annotations stay.
func TestHPAV2WritesDropV1Annotations(t *testing.T) {
	srv := startServer(t, Options{})
	createNamespace(t, srv, "ns")
	bogus := map[string]string{
		"autoscaling.alpha.kubernetes.io/metrics":  `[{"type":"Pods","pods":{"metricName":"bogus","targetAverageValue":"1"}}]`,
		"autoscaling.alpha.kubernetes.io/behavior": `{"ScaleUp":null,"ScaleDown":null}`,
		"team": "a",
	}
	h := v2HPA()
	h.Annotations = bogus
	created, err := send(t, srv, http.MethodPost, hpaV2, "", h)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"team": "a"}, created.GetAnnotations(), "create")

	_, err = send(t, srv, http.MethodPatch, hpaV2+"/web", "application/merge-patch+json",
		`{"metadata":{"annotations":{"autoscaling.alpha.kubernetes.io/conditions":"[]","b":"2"}}}`)
	require.NoError(t, err)
	got, err := send(t, srv, http.MethodGet, hpaV2+"/web", "", "")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"team": "a", "b": "2"}, got.GetAnnotations(), "merge patch")

	applied := v2HPA()
	applied.Name = "applied"
	applied.Annotations = bogus
	got, err = send(t, srv, http.MethodPatch, hpaV2+"/applied?fieldManager=a", "application/apply-patch+yaml", applied)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"team": "a"}, got.GetAnnotations(), "apply")

	v1, err := send(t, srv, http.MethodGet, hpaV1+"/web", "", "")
	require.NoError(t, err)
	assert.JSONEq(t, `[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"100"}}]`,
		v1.GetAnnotations()["autoscaling.alpha.kubernetes.io/metrics"], "v1 shows the fields, not the annotation sent")
}
