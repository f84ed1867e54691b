package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKubectlViewsAndReviews drives kubectl through the second versions
// fakeapi serves of stored resources (events.k8s.io/v1 Events,
// autoscaling/v1 HPAs) and through the reviews kubectl auth sends: one
// Event written through either API is listed by both, an autoscaling/v2
// HPA reads back through v1 with its CPU target, kubectl auth can-i is
// allowed and kubectl auth whoami names the server's one user.
func TestKubectlViewsAndReviews(t *testing.T) {
	k := startKubectlTarget(t)

	require.Contains(t, k.Run("create", "-f", "testdata/event.yaml"), "event/web.started created")
	newEvent := k.Write("new-event.yaml", `apiVersion: events.k8s.io/v1
kind: Event
metadata:
  name: web.failed
  namespace: default
eventTime: "2026-01-01T00:00:00.000000Z"
reportingController: example.com/ctl
reportingInstance: ctl-0
action: Sync
reason: Failed
regarding:
  kind: Deployment
  name: web
  namespace: default
note: written through events.k8s.io
type: Warning
`)
	require.Contains(t, k.Run("create", "-f", newEvent), "event.events.k8s.io/web.failed created")
	both := k.Run("get", "events.v1.events.k8s.io", "-A")
	require.Regexp(t, `NAMESPACE\s+LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE`, both)
	require.Regexp(t, `Normal\s+Started\s+deployment/web\s+the test wrote this event`, both, "a core/v1 Event, through events.k8s.io/v1")
	require.Regexp(t, `Warning\s+Failed\s+deployment/web\s+written through events.k8s.io`, both)
	require.Regexp(t, `Warning\s+Failed\s+deployment/web\s+written through events.k8s.io`, k.Run("get", "events"),
		"an events.k8s.io/v1 Event, through core/v1")
	require.Equal(t, "the test wrote this event", k.Run("get", "events.v1.events.k8s.io", "web.started", "-o", "jsonpath={.note}"))

	hpa := k.Write("hpa.yaml", `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
  namespace: default
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 4
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}
  - type: Pods
    pods: {metric: {name: qps}, target: {type: AverageValue, averageValue: "10"}}
`)
	require.Contains(t, k.Run("apply", "-f", hpa), "horizontalpodautoscaler.autoscaling/web created")
	// kubectl expands the short name "hpa" to the preferred version, so
	// v1 itself is asked for by the resource's full name.
	require.Regexp(t, `NAME\s+.*\n\s*web\s+`, k.Run("get", "hpa.v1.autoscaling"))
	const v1 = "horizontalpodautoscalers.v1.autoscaling"
	require.Regexp(t, `NAME\s+.*\n\s*web\s+`, k.Run("get", v1))
	require.Equal(t, "60", k.Run("get", v1, "web", "-o", "jsonpath={.spec.targetCPUUtilizationPercentage}"))
	require.Contains(t, k.Run("get", v1, "web", "-o", `jsonpath={.metadata.annotations.autoscaling\.alpha\.kubernetes\.io/metrics}`),
		`"metricName":"qps"`, "what v1 cannot say travels in the real server's annotation")
	require.Contains(t, k.Run("patch", v1, "web", "--type=merge", "-p", `{"spec":{"maxReplicas":6}}`),
		"horizontalpodautoscaler.autoscaling/web patched")
	require.Equal(t, "6 qps", k.Run("get", "hpa.v2.autoscaling", "web", "-o", `jsonpath={.spec.maxReplicas} {.spec.metrics[?(@.type=="Pods")].pods.metric.name}`),
		"a v1 patch keeps the v2 metrics (the CPU one now last, as after the real conversion)")

	require.Contains(t, k.Run("explain", "events.note", "--api-version=events.k8s.io/v1"), "FIELD: note <string>")
	require.Contains(t, k.Run("explain", "selfsubjectaccessreviews.status.allowed"), "FIELD: allowed <boolean>")

	require.Equal(t, "yes", k.Run("auth", "can-i", "create", "pods"))
	require.Regexp(t, `Username\s+fakeapi-admin`, k.Run("auth", "whoami"))
}
