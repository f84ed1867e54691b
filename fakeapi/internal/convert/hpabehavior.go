package convert

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The behavior annotation holds the real server's internal
// HorizontalPodAutoscalerBehavior marshalled as it is: its fields carry no
// JSON names, so the keys are the Go field names ("ScaleUp",
// "StabilizationWindowSeconds"). These types have the same fields in the
// same order, so the annotation reads and writes as the real server's does.

type internalBehavior struct {
	ScaleUp   *internalRules
	ScaleDown *internalRules
}

type internalRules struct {
	StabilizationWindowSeconds *int32
	SelectPolicy               *autoscalingv2.ScalingPolicySelect
	Policies                   []internalPolicy
	Tolerance                  *resource.Quantity
}

type internalPolicy struct {
	Type          autoscalingv2.HPAScalingPolicyType
	Value         int32
	PeriodSeconds int32
}

// behaviorToAnnotation is the annotation's form of a v2 behavior.
func behaviorToAnnotation(in *autoscalingv2.HorizontalPodAutoscalerBehavior) *internalBehavior {
	if in == nil {
		return nil
	}
	return &internalBehavior{ScaleUp: rulesToInternal(in.ScaleUp), ScaleDown: rulesToInternal(in.ScaleDown)}
}

func rulesToInternal(in *autoscalingv2.HPAScalingRules) *internalRules {
	if in == nil {
		return nil
	}
	out := &internalRules{StabilizationWindowSeconds: in.StabilizationWindowSeconds, SelectPolicy: in.SelectPolicy,
		Tolerance: in.Tolerance}
	for _, p := range in.Policies {
		out.Policies = append(out.Policies, internalPolicy(p))
	}
	return out
}

// toV2 is the v2 behavior the annotation describes.
func (b internalBehavior) toV2() *autoscalingv2.HorizontalPodAutoscalerBehavior {
	return &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: b.ScaleUp.toV2(), ScaleDown: b.ScaleDown.toV2()}
}

func (r *internalRules) toV2() *autoscalingv2.HPAScalingRules {
	if r == nil {
		return nil
	}
	out := &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: r.StabilizationWindowSeconds,
		SelectPolicy: r.SelectPolicy, Tolerance: r.Tolerance}
	for _, p := range r.Policies {
		out.Policies = append(out.Policies, autoscalingv2.HPAScalingPolicy(p))
	}
	return out
}
