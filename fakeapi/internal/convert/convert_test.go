package convert

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var when = metav1.NewMicroTime(time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC))

func fullEvent() *eventsv1.Event {
	return &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "e", Labels: map[string]string{"a": "b"}},
		EventTime:  when, Series: &eventsv1.EventSeries{Count: 3, LastObservedTime: when},
		ReportingController: "example.com/c", ReportingInstance: "c-0", Action: "Sync", Reason: "Synced",
		Regarding: corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "p", UID: "u"},
		Related:   &corev1.ObjectReference{Kind: "Node", Name: "n"},
		Note:      "synced p", Type: corev1.EventTypeNormal,
		DeprecatedSource:         corev1.EventSource{Component: "old", Host: "h"},
		DeprecatedFirstTimestamp: metav1.NewTime(when.Time), DeprecatedLastTimestamp: metav1.NewTime(when.Time),
		DeprecatedCount: 7,
	}
}

// Every events.k8s.io/v1 field lands on its core/v1 name, and back.
func TestEventFieldsMapBothWays(t *testing.T) {
	in := fullEvent()
	core := EventToCore(in)
	assert.Equal(t, "synced p", core.Message)
	assert.Equal(t, in.Regarding, core.InvolvedObject)
	assert.Equal(t, in.Related, core.Related)
	assert.Equal(t, "old", core.Source.Component)
	assert.Equal(t, int32(7), core.Count)
	assert.Equal(t, in.DeprecatedFirstTimestamp, core.FirstTimestamp)
	assert.Equal(t, in.DeprecatedLastTimestamp, core.LastTimestamp)
	assert.Equal(t, "example.com/c", core.ReportingController)
	assert.Equal(t, "c-0", core.ReportingInstance)
	assert.Equal(t, &corev1.EventSeries{Count: 3, LastObservedTime: when}, core.Series)
	assert.Equal(t, "v1", core.APIVersion)

	back := EventFromCore(core)
	in.TypeMeta = metav1.TypeMeta{APIVersion: "events.k8s.io/v1", Kind: "Event"}
	assert.Equal(t, in, back)
	core.Related.Name = "changed"
	assert.Equal(t, "n", back.Related.Name, "the result shares nothing with its input")
}

func TestEventsV1CreateRules(t *testing.T) {
	ok := EventToCore(fullEvent())
	ok.Source, ok.Count, ok.FirstTimestamp, ok.LastTimestamp = corev1.EventSource{}, 0, metav1.Time{}, metav1.Time{}
	assert.Empty(t, ValidateEventsV1Create(ok))

	bad := ok.DeepCopy()
	bad.EventTime, bad.Type, bad.Count = metav1.MicroTime{}, "Odd", 2
	bad.Series = &corev1.EventSeries{Count: 1}
	fields := func(ev *corev1.Event) []string {
		var out []string
		for _, e := range ValidateEventsV1Create(ev) {
			out = append(out, e.Field)
		}
		return out
	}
	assert.ElementsMatch(t, []string{"series.count", "series.lastObservedTime", "eventTime", "type", "count"}, fields(bad))

	noReporter := ok.DeepCopy()
	noReporter.ReportingController, noReporter.ReportingInstance, noReporter.Action = "", "", ""
	// As on the real server, an empty reportingController is also not a
	// qualified name: it is reported more than once.
	assert.Subset(t, fields(noReporter), []string{"reportingController", "reportingInstance", "action"})
	assert.NotContains(t, fields(noReporter), "reason")
}

func TestEventsV1UpdateKeepsAllButSeries(t *testing.T) {
	old := EventToCore(fullEvent())
	next := old.DeepCopy()
	next.Series.Count = 4
	assert.Empty(t, ValidateEventsV1Update(next, old))
	next.Message = "other"
	errs := ValidateEventsV1Update(next, old)
	require.Len(t, errs, 1)
	assert.Equal(t, "message", errs[0].Field)
}

func quantity(s string) *resource.Quantity { q := resource.MustParse(s); return &q }

func fullHPA() *autoscalingv2.HorizontalPodAutoscaler {
	window, policy := int32(60), autoscalingv2.MaxChangePolicySelect
	return &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", Annotations: map[string]string{"keep": "me"}},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    new(int32(2)), MaxReplicas: 10,
			Metrics: []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Name: "qps"},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: quantity("100")}}},
				cpuUtilization(50),
			},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{
				StabilizationWindowSeconds: &window, SelectPolicy: &policy,
				Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 1, PeriodSeconds: 30}}}},
		},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 3, DesiredReplicas: 4,
			CurrentMetrics: []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType,
				Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU,
					Current: autoscalingv2.MetricValueStatus{AverageUtilization: new(int32(42)), AverageValue: quantity("120m")}}}},
			Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue,
				Reason: "ReadyForNewScale"}}},
	}
}

// What v1 has no field for survives a trip through v1 in the real
// server's annotations, and comes back as fields, the annotations gone.
func TestHPARoundTripThroughV1(t *testing.T) {
	in := fullHPA()
	v1, err := HPAToV1(in)
	require.NoError(t, err)
	assert.Equal(t, new(int32(50)), v1.Spec.TargetCPUUtilizationPercentage)
	assert.Equal(t, new(int32(42)), v1.Status.CurrentCPUUtilizationPercentage)
	assert.Equal(t, "me", v1.Annotations["keep"])
	assert.JSONEq(t, `[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"100"}}]`, v1.Annotations[MetricsAnnotation])
	assert.JSONEq(t, `[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":42,"currentAverageValue":"120m"}}]`,
		v1.Annotations[CurrentMetricsAnnotation])
	assert.JSONEq(t, `[{"type":"AbleToScale","status":"True","lastTransitionTime":null,"reason":"ReadyForNewScale"}]`,
		v1.Annotations[ConditionsAnnotation])
	assert.JSONEq(t, `{"ScaleUp":null,"ScaleDown":{"StabilizationWindowSeconds":60,"SelectPolicy":"Max",`+
		`"Policies":[{"Type":"Pods","Value":1,"PeriodSeconds":30}],"Tolerance":null}}`, v1.Annotations[BehaviorAnnotation])

	back := HPAToV2(v1)
	assert.Equal(t, in, back)
}

// A v1 HPA written with no target gets v1's implied 80% CPU; a stale
// round-trip annotation on a v2 object is not shown; a malformed one is
// dropped.
func TestHPAV1Defaults(t *testing.T) {
	v2 := HPAToV2(&autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "h",
		Annotations: map[string]string{MetricsAnnotation: "{not json"}}})
	require.Len(t, v2.Spec.Metrics, 1)
	assert.Equal(t, cpuUtilization(80), v2.Spec.Metrics[0])
	assert.Nil(t, v2.Annotations)

	stale := fullHPA()
	stale.Spec.Behavior, stale.Status.Conditions = nil, nil
	stale.Annotations[BehaviorAnnotation] = "{}"
	v1, err := HPAToV1(stale)
	require.NoError(t, err)
	assert.NotContains(t, v1.Annotations, BehaviorAnnotation)
	assert.NotContains(t, v1.Annotations, ConditionsAnnotation)
}
