package convert

import (
	"encoding/json"
	"slices"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Kinds of the two versions of a HorizontalPodAutoscaler.
var (
	HPAv2Kind = autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler")
	HPAv1Kind = autoscalingv1.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler")
)

// The annotations in which autoscaling/v1 carries what it has no field
// for, with the names and JSON of the real server's conversion.
const (
	// MetricsAnnotation holds the metrics other than the CPU utilization
	// target, as a JSON list of autoscaling/v1 MetricSpecs.
	MetricsAnnotation = "autoscaling.alpha.kubernetes.io/metrics"
	// CurrentMetricsAnnotation holds every current metric, the CPU one
	// too (its raw value is lost otherwise), as autoscaling/v1
	// MetricStatuses.
	CurrentMetricsAnnotation = "autoscaling.alpha.kubernetes.io/current-metrics"
	// ConditionsAnnotation holds the status conditions, as autoscaling/v1
	// HorizontalPodAutoscalerConditions.
	ConditionsAnnotation = "autoscaling.alpha.kubernetes.io/conditions"
	// BehaviorAnnotation holds spec.behavior, in the JSON of the real
	// server's internal type, whose fields have no JSON names
	// (hpabehavior.go).
	BehaviorAnnotation = "autoscaling.alpha.kubernetes.io/behavior"
)

// defaultCPUUtilization is the target a v1 HPA without one gets, made
// explicit by the conversion as the real one does.
const defaultCPUUtilization = 80

// HPAToV1 converts a stored autoscaling/v2 HPA to autoscaling/v1: the
// first CPU Resource metric with a Utilization target becomes
// targetCPUUtilizationPercentage, the current CPU utilization
// currentCPUUtilizationPercentage, and the rest goes into the annotations
// (any the stored object carried are replaced). in is not modified.
func HPAToV1(in *autoscalingv2.HorizontalPodAutoscaler) (*autoscalingv1.HorizontalPodAutoscaler, error) {
	in = in.DeepCopy()
	out := &autoscalingv1.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: HPAv1Kind.GroupVersion().String(), Kind: HPAv1Kind.Kind},
		ObjectMeta: in.ObjectMeta,
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference(in.Spec.ScaleTargetRef),
			MinReplicas:    in.Spec.MinReplicas, MaxReplicas: in.Spec.MaxReplicas,
		},
		Status: autoscalingv1.HorizontalPodAutoscalerStatus{
			ObservedGeneration: in.Status.ObservedGeneration, LastScaleTime: in.Status.LastScaleTime,
			CurrentReplicas: in.Status.CurrentReplicas, DesiredReplicas: in.Status.DesiredReplicas,
		},
	}
	out.Annotations = withoutRoundTrip(out.Annotations)
	var other []autoscalingv1.MetricSpec
	for _, m := range in.Spec.Metrics {
		if isCPUUtilization(m) {
			if out.Spec.TargetCPUUtilizationPercentage == nil {
				out.Spec.TargetCPUUtilizationPercentage = m.Resource.Target.AverageUtilization
			}
			continue
		}
		other = append(other, metricSpecToV1(m))
	}
	current := make([]autoscalingv1.MetricStatus, len(in.Status.CurrentMetrics))
	for i, m := range in.Status.CurrentMetrics {
		if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU &&
			m.Resource.Current.AverageUtilization != nil {
			out.Status.CurrentCPUUtilizationPercentage = m.Resource.Current.AverageUtilization
		}
		current[i] = metricStatusToV1(m)
	}
	conditions := make([]autoscalingv1.HorizontalPodAutoscalerCondition, len(in.Status.Conditions))
	for i, c := range in.Status.Conditions {
		conditions[i] = autoscalingv1.HorizontalPodAutoscalerCondition{Type: autoscalingv1.HorizontalPodAutoscalerConditionType(c.Type),
			Status: c.Status, LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message,
			ObservedGeneration: c.ObservedGeneration}
	}
	set := annotationSetter(&out.ObjectMeta)
	for _, a := range []struct {
		key   string
		value any
		use   bool
	}{
		{MetricsAnnotation, other, len(other) > 0},
		{CurrentMetricsAnnotation, current, len(current) > 0},
		{ConditionsAnnotation, conditions, len(conditions) > 0},
		{BehaviorAnnotation, behaviorToAnnotation(in.Spec.Behavior), in.Spec.Behavior != nil},
	} {
		if a.use {
			if err := set(a.key, a.value); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// HPAToV2 converts an autoscaling/v1 HPA to the autoscaling/v2 one the
// server stores: the annotations come back as fields (and are removed),
// the CPU target is the last metric, and an HPA with no metric at all
// gets the 80% CPU target v1 always implied. A malformed annotation is
// dropped, as the real server drops it, rather than failing the write.
// in is not modified.
func HPAToV2(in *autoscalingv1.HorizontalPodAutoscaler) *autoscalingv2.HorizontalPodAutoscaler {
	in = in.DeepCopy()
	out := &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: HPAv2Kind.GroupVersion().String(), Kind: HPAv2Kind.Kind},
		ObjectMeta: in.ObjectMeta,
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference(in.Spec.ScaleTargetRef),
			MinReplicas:    in.Spec.MinReplicas, MaxReplicas: in.Spec.MaxReplicas,
		},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{
			ObservedGeneration: in.Status.ObservedGeneration, LastScaleTime: in.Status.LastScaleTime,
			CurrentReplicas: in.Status.CurrentReplicas, DesiredReplicas: in.Status.DesiredReplicas,
		},
	}
	annotations := in.Annotations
	out.Annotations = withoutRoundTrip(in.Annotations)
	var other []autoscalingv1.MetricSpec
	if decode(annotations, MetricsAnnotation, &other) {
		for _, m := range other {
			out.Spec.Metrics = append(out.Spec.Metrics, metricSpecToV2(m))
		}
	}
	target := in.Spec.TargetCPUUtilizationPercentage
	if target == nil && len(out.Spec.Metrics) == 0 {
		target = new(int32(defaultCPUUtilization))
	}
	if target != nil {
		out.Spec.Metrics = append(out.Spec.Metrics, cpuUtilization(*target))
	}
	if cpu := in.Status.CurrentCPUUtilizationPercentage; cpu != nil {
		out.Status.CurrentMetrics = []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU,
				Current: autoscalingv2.MetricValueStatus{AverageUtilization: cpu}}}}
	}
	var current []autoscalingv1.MetricStatus
	if decode(annotations, CurrentMetricsAnnotation, &current) {
		// The annotation knows more than the CPU field: it wins.
		out.Status.CurrentMetrics = make([]autoscalingv2.MetricStatus, len(current))
		for i, m := range current {
			out.Status.CurrentMetrics[i] = metricStatusToV2(m)
		}
	}
	var conditions []autoscalingv1.HorizontalPodAutoscalerCondition
	if decode(annotations, ConditionsAnnotation, &conditions) {
		for _, c := range conditions {
			out.Status.Conditions = append(out.Status.Conditions, autoscalingv2.HorizontalPodAutoscalerCondition{
				Type: autoscalingv2.HorizontalPodAutoscalerConditionType(c.Type), Status: c.Status,
				LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message,
				ObservedGeneration: c.ObservedGeneration})
		}
	}
	var behavior internalBehavior
	if decode(annotations, BehaviorAnnotation, &behavior) && (behavior.ScaleUp != nil || behavior.ScaleDown != nil) {
		out.Spec.Behavior = behavior.toV2()
	}
	return out
}

// isCPUUtilization tells the metric v1 has a field for.
func isCPUUtilization(m autoscalingv2.MetricSpec) bool {
	return m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil &&
		m.Resource.Name == corev1.ResourceCPU && m.Resource.Target.AverageUtilization != nil
}

// cpuUtilization is the v2 metric of a v1 CPU target.
func cpuUtilization(percent int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &percent}}}
}

// DropRoundTripAnnotations removes the conversion's annotations from an
// autoscaling/v2 HPA, as the real server does whenever it decodes one: v2
// has a field for everything they carry, so an annotation a client sends
// on v2 (copied from a v1 object, say) is not kept, and cannot override
// the fields on the next v1 read. The other annotations stay.
func DropRoundTripAnnotations(h *autoscalingv2.HorizontalPodAutoscaler) {
	for _, k := range roundTripAnnotations {
		if _, ok := h.Annotations[k]; ok {
			h.Annotations = withoutRoundTrip(h.Annotations)
			return
		}
	}
}

// roundTripAnnotations are the annotations the conversion owns.
var roundTripAnnotations = []string{MetricsAnnotation, CurrentMetricsAnnotation, ConditionsAnnotation, BehaviorAnnotation}

// withoutRoundTrip returns a copy of the annotations without the
// conversion's own (nil when none is left).
func withoutRoundTrip(in map[string]string) map[string]string {
	var out map[string]string
	for k, v := range in {
		if slices.Contains(roundTripAnnotations, k) {
			continue
		}
		if out == nil {
			out = make(map[string]string, len(in))
		}
		out[k] = v
	}
	return out
}

// annotationSetter returns a function that stores a value as JSON in an
// annotation of m.
func annotationSetter(m *metav1.ObjectMeta) func(key string, value any) error {
	return func(key string, value any) error {
		data, err := json.Marshal(value)
		if err != nil {
			return err
		}
		if m.Annotations == nil {
			m.Annotations = map[string]string{}
		}
		m.Annotations[key] = string(data)
		return nil
	}
}

// decode reads the JSON in annotation key into into, reporting whether it
// was there and well formed.
func decode(annotations map[string]string, key string, into any) bool {
	data, ok := annotations[key]
	return ok && json.Unmarshal([]byte(data), into) == nil
}
