package realpod

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A cache built from one list of pods stamped from a few templates, in
// name order, is the kindest case for sharing equal values between
// objects: a real cluster's pods drift from their templates as kubelets
// update their status one by one, and many pods come from templates of
// their own. Mixed, Restarted and ChurnOrder build those cases.

// UniqueEvery and UniqueOf: Mixed's pod i has a template of its own when
// i%UniqueOf < UniqueEvery, 30% of the pods.
const UniqueEvery, UniqueOf = 3, 10

// Mixed is pod i, unless it is one of the 30% that get a template of their
// own: their image, version, template hash, config checksum and
// environment are theirs alone.
func Mixed(i int) *corev1.Pod {
	p := New(i)
	if i%UniqueOf >= UniqueEvery {
		return p
	}
	own := fmt.Sprintf("%08x", uint32(i)*2246822519)
	version := "1.24." + strconv.Itoa(i)
	p.Labels["pod-template-hash"] = own
	p.Labels["app.kubernetes.io/version"] = version
	p.Annotations["checksum/config"] = own + own
	app := &p.Spec.Containers[0]
	app.Image = "registry.example.com/shop/" + p.Labels["app"] + ":" + version
	app.Env = append(app.Env, corev1.EnvVar{Name: "BUILD", Value: own})
	p.Status.ContainerStatuses[0].Image = app.Image
	return p
}

// Restarted changes pod p, number i, as a kubelet writes it after the app
// container's restart at: a new running state, the last one terminated,
// the restart count up and the readiness conditions moved. round keeps
// two churns' writes apart. It returns p.
func Restarted(p *corev1.Pod, i, round int, at time.Time) *corev1.Pod {
	now := metav1.NewTime(at.Truncate(time.Second))
	cs := &p.Status.ContainerStatuses[0]
	cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: 137, Reason: "OOMKilled", StartedAt: cs.State.Running.StartedAt, FinishedAt: now,
		ContainerID: cs.ContainerID}}
	cs.State.Running = &corev1.ContainerStateRunning{StartedAt: now}
	cs.RestartCount = int32(round + 1)
	cs.ContainerID = fmt.Sprintf("containerd://%032x%032x", i, round+1)
	for j := range p.Status.Conditions {
		switch p.Status.Conditions[j].Type {
		case corev1.PodReady, corev1.ContainersReady:
			p.Status.Conditions[j].LastTransitionTime = now
		}
	}
	p.Annotations["bench.informer/round"] = strconv.Itoa(round)
	return p
}

// ChurnOrder is every pod index below n once, in an order fixed by round.
func ChurnOrder(n, round int) []int {
	return rand.New(rand.NewPCG(uint64(n), uint64(round))).Perm(n)
}
