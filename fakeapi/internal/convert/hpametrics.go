package convert

import (
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The metrics of the annotations are autoscaling/v1's MetricSpec and
// MetricStatus, the shapes of the old v2beta1 API: a target is a set of
// fields named after its type (targetAverageUtilization,
// targetAverageValue...) rather than a MetricTarget. These functions map
// one shape onto the other as the real conversion does: on the way to v2,
// the target's type is read from which field is set.

// metricSpecToV1 converts one v2 metric to its v1 annotation form.
func metricSpecToV1(in autoscalingv2.MetricSpec) autoscalingv1.MetricSpec {
	out := autoscalingv1.MetricSpec{Type: autoscalingv1.MetricSourceType(in.Type)}
	switch {
	case in.Object != nil:
		o := in.Object
		out.Object = &autoscalingv1.ObjectMetricSource{
			Target:     autoscalingv1.CrossVersionObjectReference(o.DescribedObject),
			MetricName: o.Metric.Name, Selector: o.Metric.Selector,
			TargetValue: valueOf(o.Target.Value), AverageValue: o.Target.AverageValue}
	case in.Pods != nil:
		out.Pods = &autoscalingv1.PodsMetricSource{MetricName: in.Pods.Metric.Name, Selector: in.Pods.Metric.Selector,
			TargetAverageValue: valueOf(in.Pods.Target.AverageValue)}
	case in.Resource != nil:
		out.Resource = &autoscalingv1.ResourceMetricSource{Name: in.Resource.Name,
			TargetAverageUtilization: in.Resource.Target.AverageUtilization, TargetAverageValue: in.Resource.Target.AverageValue}
	case in.ContainerResource != nil:
		c := in.ContainerResource
		out.ContainerResource = &autoscalingv1.ContainerResourceMetricSource{Name: c.Name, Container: c.Container,
			TargetAverageUtilization: c.Target.AverageUtilization, TargetAverageValue: c.Target.AverageValue}
	case in.External != nil:
		e := in.External
		out.External = &autoscalingv1.ExternalMetricSource{MetricName: e.Metric.Name, MetricSelector: e.Metric.Selector,
			TargetValue: e.Target.Value, TargetAverageValue: e.Target.AverageValue}
	}
	return out
}

// metricSpecToV2 converts one annotation metric back.
func metricSpecToV2(in autoscalingv1.MetricSpec) autoscalingv2.MetricSpec {
	out := autoscalingv2.MetricSpec{Type: autoscalingv2.MetricSourceType(in.Type)}
	switch {
	case in.Object != nil:
		o := in.Object
		typ := autoscalingv2.ValueMetricType
		if o.AverageValue != nil {
			typ = autoscalingv2.AverageValueMetricType
		}
		out.Object = &autoscalingv2.ObjectMetricSource{
			DescribedObject: autoscalingv2.CrossVersionObjectReference(o.Target),
			Metric:          autoscalingv2.MetricIdentifier{Name: o.MetricName, Selector: o.Selector},
			Target:          autoscalingv2.MetricTarget{Type: typ, Value: &o.TargetValue, AverageValue: o.AverageValue}}
	case in.Pods != nil:
		out.Pods = &autoscalingv2.PodsMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: in.Pods.MetricName, Selector: in.Pods.Selector},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &in.Pods.TargetAverageValue}}
	case in.Resource != nil:
		out.Resource = &autoscalingv2.ResourceMetricSource{Name: in.Resource.Name,
			Target: targetOf(in.Resource.TargetAverageUtilization, in.Resource.TargetAverageValue)}
	case in.ContainerResource != nil:
		c := in.ContainerResource
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricSource{Name: c.Name, Container: c.Container,
			Target: targetOf(c.TargetAverageUtilization, c.TargetAverageValue)}
	case in.External != nil:
		e := in.External
		typ := autoscalingv2.ValueMetricType
		if e.TargetValue == nil {
			typ = autoscalingv2.AverageValueMetricType
		}
		out.External = &autoscalingv2.ExternalMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: e.MetricName, Selector: e.MetricSelector},
			Target: autoscalingv2.MetricTarget{Type: typ, Value: e.TargetValue, AverageValue: e.TargetAverageValue}}
	}
	return out
}

// targetOf is the v2 target of a resource metric: Utilization when a
// utilization is set, else AverageValue.
func targetOf(utilization *int32, averageValue *resource.Quantity) autoscalingv2.MetricTarget {
	if utilization != nil {
		return autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: utilization, AverageValue: averageValue}
	}
	return autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: averageValue}
}

// metricStatusToV1 converts one current metric to its annotation form.
func metricStatusToV1(in autoscalingv2.MetricStatus) autoscalingv1.MetricStatus {
	out := autoscalingv1.MetricStatus{Type: autoscalingv1.MetricSourceType(in.Type)}
	switch {
	case in.Object != nil:
		o := in.Object
		out.Object = &autoscalingv1.ObjectMetricStatus{Target: autoscalingv1.CrossVersionObjectReference(o.DescribedObject),
			MetricName: o.Metric.Name, Selector: o.Metric.Selector,
			CurrentValue: valueOf(o.Current.Value), AverageValue: o.Current.AverageValue}
	case in.Pods != nil:
		out.Pods = &autoscalingv1.PodsMetricStatus{MetricName: in.Pods.Metric.Name, Selector: in.Pods.Metric.Selector,
			CurrentAverageValue: valueOf(in.Pods.Current.AverageValue)}
	case in.Resource != nil:
		out.Resource = &autoscalingv1.ResourceMetricStatus{Name: in.Resource.Name,
			CurrentAverageUtilization: in.Resource.Current.AverageUtilization, CurrentAverageValue: valueOf(in.Resource.Current.AverageValue)}
	case in.ContainerResource != nil:
		c := in.ContainerResource
		out.ContainerResource = &autoscalingv1.ContainerResourceMetricStatus{Name: c.Name, Container: c.Container,
			CurrentAverageUtilization: c.Current.AverageUtilization, CurrentAverageValue: valueOf(c.Current.AverageValue)}
	case in.External != nil:
		e := in.External
		out.External = &autoscalingv1.ExternalMetricStatus{MetricName: e.Metric.Name, MetricSelector: e.Metric.Selector,
			CurrentValue: valueOf(e.Current.Value), CurrentAverageValue: e.Current.AverageValue}
	}
	return out
}

// metricStatusToV2 converts one annotation current metric back.
func metricStatusToV2(in autoscalingv1.MetricStatus) autoscalingv2.MetricStatus {
	out := autoscalingv2.MetricStatus{Type: autoscalingv2.MetricSourceType(in.Type)}
	switch {
	case in.Object != nil:
		o := in.Object
		out.Object = &autoscalingv2.ObjectMetricStatus{DescribedObject: autoscalingv2.CrossVersionObjectReference(o.Target),
			Metric:  autoscalingv2.MetricIdentifier{Name: o.MetricName, Selector: o.Selector},
			Current: autoscalingv2.MetricValueStatus{Value: &o.CurrentValue, AverageValue: o.AverageValue}}
	case in.Pods != nil:
		out.Pods = &autoscalingv2.PodsMetricStatus{
			Metric:  autoscalingv2.MetricIdentifier{Name: in.Pods.MetricName, Selector: in.Pods.Selector},
			Current: autoscalingv2.MetricValueStatus{AverageValue: &in.Pods.CurrentAverageValue}}
	case in.Resource != nil:
		out.Resource = &autoscalingv2.ResourceMetricStatus{Name: in.Resource.Name,
			Current: autoscalingv2.MetricValueStatus{AverageUtilization: in.Resource.CurrentAverageUtilization,
				AverageValue: &in.Resource.CurrentAverageValue}}
	case in.ContainerResource != nil:
		c := in.ContainerResource
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricStatus{Name: c.Name, Container: c.Container,
			Current: autoscalingv2.MetricValueStatus{AverageUtilization: c.CurrentAverageUtilization, AverageValue: &c.CurrentAverageValue}}
	case in.External != nil:
		e := in.External
		out.External = &autoscalingv2.ExternalMetricStatus{
			Metric:  autoscalingv2.MetricIdentifier{Name: e.MetricName, Selector: e.MetricSelector},
			Current: autoscalingv2.MetricValueStatus{Value: &e.CurrentValue, AverageValue: e.CurrentAverageValue}}
	}
	return out
}

// valueOf is the quantity, or zero for none.
func valueOf(q *resource.Quantity) resource.Quantity {
	if q == nil {
		return resource.Quantity{}
	}
	return *q
}
