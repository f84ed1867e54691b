package bench

import (
	"fmt"
	"strings"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/seed31a95821/informer/fakeapi"
)

// The phases of TestInterop and the typed-clientset writes they make.

// writes makes creates, updates and deletes of all three resources, in
// both namespaces.
func (r *interopRun) writes() {
	for i := range 3 {
		r.createPod("default", fmt.Sprintf("w-%d", i))
	}
	r.updatePod("default", "seed-0")
	r.updatePod("default", "seed-1")
	r.updatePod("team-a", "seed-0")
	r.deletePod("default", "seed-3")
	r.deletePod("team-a", "seed-4")

	r.createService("default", "api")
	r.updateService("team-a", "web")
	r.deleteService("default", "web")

	r.createDeployment("default", "api")
	r.updateDeployment("default", "web")
	r.deleteDeployment("team-a", "web")
}

// dropWatches ends every watch through the admin endpoint, with writes
// before and after. Convergence then needs client-go to re-watch (resuming
// from its resourceVersion, or relisting after a short watch), which the
// new watch requests prove happened: without them the writes after the
// drop could only arrive on a watch the drop failed to end.
func (r *interopRun) dropWatches() {
	before := r.watchRequests()
	r.createPod("default", "d-0")
	r.updatePod("default", "seed-0")

	postAdmin(r.t, r.srv, "drop-watches", "")

	r.createPod("default", "d-1")
	r.deletePod("default", "d-0")
	r.updatePod("team-a", "seed-1")
	r.createService("team-a", "api")
	r.updateDeployment("default", "api")

	require.Eventually(r.t, func() bool {
		after := r.watchRequests()
		for gvr := range collectionPaths {
			if after[gvr] <= before[gvr] {
				return false
			}
		}
		return true
	}, convergeTimeout, 10*time.Millisecond, "client-go did not re-watch every resource after drop-watches")
}

// compactWithMissedDelete deletes a pod while the pod watch is held silent,
// compacts the history past the delete and drops the watches. client-go's
// resume from its last resourceVersion then gets 410 Expired, so it must
// relist (by WatchList) and infer the delete by the pod's absence: the
// handler gets a cache.DeletedFinalStateUnknown tombstone.
func (r *interopRun) compactWithMissedDelete() {
	r.createPod("default", "victim")
	r.allConverge("before compact")
	relists := countSent(r.srv, podsGVR, isInitialEventsEnd)

	// The stall holds the pod watch before it reads the next event, so
	// none of the writes below reaches the informer on that stream.
	postAdmin(r.t, r.srv, "faults/stall", `{"resource":"pods"}`)
	r.deletePod("default", "victim")
	r.updatePod("default", "seed-2")
	r.createPod("team-a", "c-0")
	r.deleteService("team-a", "api")

	postAdmin(r.t, r.srv, "compact", "")
	postAdmin(r.t, r.srv, "drop-watches", "")
	postAdmin(r.t, r.srv, "faults/resume", `{"resource":"pods"}`)
	r.createPod("team-a", "c-1") // while client-go is recovering

	victim := key("default", "victim")
	r.allConverge("after compact")
	require.Zero(r.t, countSent(r.srv, podsGVR, func(e fakeapi.SentEvent) bool {
		return e.Type == "DELETED" && e.Namespace == "default" && e.Name == "victim"
	}), "the stalled watch sent the delete: this phase no longer tests a missed delete")
	require.Greater(r.t, countSent(r.srv, podsGVR, isInitialEventsEnd), relists,
		"no WatchList relist of pods after the compaction")
	// The pod watch had seen events since it started, so client-go resumed
	// it from its last resourceVersion, which the compaction had expired.
	require.Positive(r.t, countSent(r.srv, podsGVR, func(e fakeapi.SentEvent) bool { return e.Type == "ERROR" }),
		"client-go's resumed pod watch was not answered with an ERROR (410 Expired) event")
	// Every watch that met the compaction (410 in an ERROR event) must be
	// followed by a WatchList relist, even where the relist changes
	// nothing the listers could show.
	require.Eventually(r.t, r.everyExpiryRelisted, convergeTimeout, 10*time.Millisecond,
		"a watch got 410 Expired and client-go did not relist by WatchList")
	seen, tombstone := r.podView.deleted(victim)
	require.True(r.t, seen, "the handler never learnt that %s was deleted", victim)
	require.True(r.t, tombstone, "%s's delete was inferred by a relist, so it must come as DeletedFinalStateUnknown", victim)
}

// everyExpiryRelisted reports whether, for every resource, each ERROR
// event fakeapi sent was followed by the end bookmark of a WatchList
// replay.
func (r *interopRun) everyExpiryRelisted() bool {
	lastError := map[schema.GroupVersionResource]int{}
	lastReplay := map[schema.GroupVersionResource]int{}
	for i, e := range r.srv.SentEvents() {
		switch {
		case e.Type == "ERROR":
			lastError[e.Resource] = i + 1
		case isInitialEventsEnd(e):
			lastReplay[e.Resource] = i + 1
		}
	}
	for gvr, i := range lastError {
		if lastReplay[gvr] < i {
			return false
		}
	}
	return true
}

// watchRequests counts the watch requests sent for each resource.
func (r *interopRun) watchRequests() map[schema.GroupVersionResource]int {
	out := map[schema.GroupVersionResource]int{}
	for gvr, path := range collectionPaths {
		for _, req := range r.log.to(path) {
			if req.query.Get("watch") == "true" {
				out[gvr]++
			}
		}
	}
	return out
}

// isResourcePath tells resource URLs (/api/v1/..., /apis/g/v/...) from
// discovery documents (/api, /api/v1, /apis, /apis/g/v).
func isResourcePath(path string) bool {
	return strings.HasPrefix(path, "/api/v1/") ||
		(strings.HasPrefix(path, "/apis/") && strings.Count(path, "/") >= 4)
}

func (r *interopRun) createPod(ns, name string) {
	r.t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": "interop"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}}},
	}
	_, err := r.cs.CoreV1().Pods(ns).Create(r.ctx, pod, metav1.CreateOptions{})
	require.NoError(r.t, err, "create pod %s/%s", ns, name)
}

// updatePod bumps a label on the pod it reads, so the update carries the
// read resourceVersion and would get 409 Conflict if it were stale.
func (r *interopRun) updatePod(ns, name string) {
	r.t.Helper()
	pod, err := r.cs.CoreV1().Pods(ns).Get(r.ctx, name, metav1.GetOptions{})
	require.NoError(r.t, err, "get pod %s/%s", ns, name)
	pod.Labels["generation"] = pod.ResourceVersion
	_, err = r.cs.CoreV1().Pods(ns).Update(r.ctx, pod, metav1.UpdateOptions{})
	require.NoError(r.t, err, "update pod %s/%s", ns, name)
}

func (r *interopRun) deletePod(ns, name string) {
	r.t.Helper()
	require.NoError(r.t, r.cs.CoreV1().Pods(ns).Delete(r.ctx, name, metav1.DeleteOptions{}), "delete pod %s/%s", ns, name)
}

func (r *interopRun) createService(ns, name string) {
	r.t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}
	_, err := r.cs.CoreV1().Services(ns).Create(r.ctx, svc, metav1.CreateOptions{})
	require.NoError(r.t, err, "create service %s/%s", ns, name)
}

func (r *interopRun) updateService(ns, name string) {
	r.t.Helper()
	svc, err := r.cs.CoreV1().Services(ns).Get(r.ctx, name, metav1.GetOptions{})
	require.NoError(r.t, err, "get service %s/%s", ns, name)
	svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: "https", Port: 443})
	_, err = r.cs.CoreV1().Services(ns).Update(r.ctx, svc, metav1.UpdateOptions{})
	require.NoError(r.t, err, "update service %s/%s", ns, name)
}

func (r *interopRun) deleteService(ns, name string) {
	r.t.Helper()
	require.NoError(r.t, r.cs.CoreV1().Services(ns).Delete(r.ctx, name, metav1.DeleteOptions{}), "delete service %s/%s", ns, name)
}

func (r *interopRun) createDeployment(ns, name string) {
	r.t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}
	_, err := r.cs.AppsV1().Deployments(ns).Create(r.ctx, d, metav1.CreateOptions{})
	require.NoError(r.t, err, "create deployment %s/%s", ns, name)
}

func (r *interopRun) updateDeployment(ns, name string) {
	r.t.Helper()
	d, err := r.cs.AppsV1().Deployments(ns).Get(r.ctx, name, metav1.GetOptions{})
	require.NoError(r.t, err, "get deployment %s/%s", ns, name)
	d.Spec.Replicas = ptr.To(*d.Spec.Replicas + 1)
	_, err = r.cs.AppsV1().Deployments(ns).Update(r.ctx, d, metav1.UpdateOptions{})
	require.NoError(r.t, err, "update deployment %s/%s", ns, name)
}

func (r *interopRun) deleteDeployment(ns, name string) {
	r.t.Helper()
	require.NoError(r.t, r.cs.AppsV1().Deployments(ns).Delete(r.ctx, name, metav1.DeleteOptions{}), "delete deployment %s/%s", ns, name)
}
