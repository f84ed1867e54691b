package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/seed31a95821/informer/fakeapi"
)

// TestInterop runs client-go's own SharedInformerFactory, with its default
// settings, against fakeapi, and checks that its caches and handlers track
// the server through ordinary writes, dropped watches and a compaction that
// forces a relist. Every write goes through client-go's typed clientset
// over HTTP. It runs once per wire format: JSON, then protobuf.
//
// If client-go works against fakeapi unchanged, fakeapi speaks the protocol
// the way kube-apiserver does, and the tests of our own informer, which run
// against fakeapi, test against something real.
func TestInterop(t *testing.T) {
	for _, format := range wireFormats {
		t.Run(format.name, func(t *testing.T) {
			// Registered first so it runs last, after the factory and
			// the server have stopped. IgnoreCurrent forgives what
			// client-go starts at init (klog's flush daemon).
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			runInterop(t, format)
		})
	}
}

var (
	podsGVR        = corev1.SchemeGroupVersion.WithResource("pods")
	servicesGVR    = corev1.SchemeGroupVersion.WithResource("services")
	deploymentsGVR = appsv1.SchemeGroupVersion.WithResource("deployments")
)

// collectionPaths are the all-namespaces URLs the factory's informers
// list and watch.
var collectionPaths = map[schema.GroupVersionResource]string{
	podsGVR:        "/api/v1/pods",
	servicesGVR:    "/api/v1/services",
	deploymentsGVR: "/apis/apps/v1/deployments",
}

// interopRun is one run of the scenario: a server, client-go pointed at
// it, and what the test observes.
type interopRun struct {
	t      *testing.T
	ctx    context.Context
	format wireFormat
	srv    *fakeapi.Server
	cs     kubernetes.Interface
	log    *requestLog

	pods        corelisters.PodLister
	services    corelisters.ServiceLister
	deployments appslisters.DeploymentLister
	podView     *handlerView
}

func runInterop(t *testing.T, format wireFormat) {
	require.True(t, clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient),
		"client-go's WatchListClient gate is off (KUBE_FEATURE_WatchListClient set?); this test is about the default, WatchList on")

	srv, err := fakeapi.NewServer(fakeapi.Options{})
	require.NoError(t, err)
	defer srv.Close()

	r := &interopRun{t: t, format: format, srv: srv, log: &requestLog{}, podView: newHandlerView()}
	r.cs, err = kubernetes.NewForConfig(restConfig(srv, format, r.log))
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r.ctx = ctx
	r.seed()

	factory := informers.NewSharedInformerFactory(r.cs, 0)
	r.pods = factory.Core().V1().Pods().Lister()
	r.services = factory.Core().V1().Services().Lister()
	r.deployments = factory.Apps().V1().Deployments().Lister()
	handler, err := factory.Core().V1().Pods().Informer().AddEventHandler(r.podView.handlers())
	require.NoError(t, err)
	factory.StartWithContext(ctx)
	// Stop order matters: the informers end when ctx does, and Shutdown
	// waits for them, so cancel first; the server closes after both
	// (deferred earlier).
	defer func() {
		cancel()
		factory.Shutdown()
	}()

	r.waitForSync(factory, handler)
	r.requireWatchListOnly()
	r.allConverge("initial sync")

	r.writes()
	r.allConverge("after creates, updates and deletes")

	r.dropWatches()
	r.allConverge("after drop-watches")

	r.compactWithMissedDelete() // checks convergence itself, then the tombstone

	r.requireWatchListOnly()
	r.requireWireFormat()
}

// seed creates objects before the informers start, so that the initial
// WatchList replays a state with something in it, in two namespaces.
func (r *interopRun) seed() {
	// As on a real cluster, "default" exists and "team-a" must be created.
	_, err := r.cs.CoreV1().Namespaces().Create(r.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}},
		metav1.CreateOptions{})
	require.NoError(r.t, err)
	for _, ns := range []string{"default", "team-a"} {
		for i := range 5 {
			r.createPod(ns, fmt.Sprintf("seed-%d", i))
		}
		r.createService(ns, "web")
		r.createDeployment(ns, "web")
	}
}

// waitForSync waits, with a deadline, for every informer the factory
// started and for the pod handler's registration to sync.
func (r *interopRun) waitForSync(factory informers.SharedInformerFactory, handler cache.ResourceEventHandlerRegistration) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(r.ctx, 20*time.Second)
	defer cancel()
	res := factory.WaitForCacheSyncWithContext(ctx)
	require.NoError(r.t, res.AsError(), "client-go's informers did not sync from fakeapi")
	require.Len(r.t, res.Synced, 3, "the factory should have started pods, services and deployments")
	for typ, synced := range res.Synced {
		require.True(r.t, synced, "%v not synced", typ)
	}
	require.True(r.t, cache.WaitForCacheSync(ctx.Done(), handler.HasSynced), "the pod handler did not sync")
}

// allConverge checks every cache and the pod handler against the server.
func (r *interopRun) allConverge(phase string) {
	r.t.Helper()
	r.t.Logf("%s: checking convergence at server RV %d", phase, r.srv.ResourceVersion())
	converges(r.t, r.srv, podsGVR, phase+": pod lister", func() map[string]string {
		items, _ := r.pods.List(labels.Everything())
		return cacheState(items)
	})
	converges(r.t, r.srv, podsGVR, phase+": pod handler", r.podView.state)
	converges(r.t, r.srv, servicesGVR, phase+": service lister", func() map[string]string {
		items, _ := r.services.List(labels.Everything())
		return cacheState(items)
	})
	converges(r.t, r.srv, deploymentsGVR, phase+": deployment lister", func() map[string]string {
		items, _ := r.deployments.List(labels.Everything())
		return cacheState(items)
	})
}

// requireWatchListOnly proves the informers used WatchList (KEP-3157) and
// never fell back to a plain LIST: client-go falls back silently when a
// WatchList fails, so "the cache synced" alone would not show that the
// server's WatchList works.
func (r *interopRun) requireWatchListOnly() {
	r.t.Helper()
	for gvr, path := range collectionPaths {
		var watchLists, resumes, lists int
		for _, req := range r.log.to(path) {
			switch {
			case req.isWatchList():
				watchLists++
			case req.isPlainList():
				lists++
			default:
				resumes++
			}
		}
		r.t.Logf("%s: %d WatchList requests, %d resumed watches, %d plain lists; fakeapi sent %d ERROR events",
			gvr.Resource, watchLists, resumes, lists, countSent(r.srv, gvr, func(e fakeapi.SentEvent) bool { return e.Type == "ERROR" }))
		require.Positive(r.t, watchLists, "%s: no WatchList request (watch=true&sendInitialEvents=true)", gvr.Resource)
		require.Zero(r.t, lists, "%s: client-go fell back to a plain LIST", gvr.Resource)
		require.Positive(r.t, countSent(r.srv, gvr, isInitialEventsEnd),
			"%s: fakeapi never sent the initial-events-end bookmark", gvr.Resource)
	}
}

// requireWireFormat proves every list, watch and write was answered in the
// configured format, and writes were sent in it.
func (r *interopRun) requireWireFormat() {
	r.t.Helper()
	checked := 0
	for _, req := range r.log.all() {
		if !isResourcePath(req.path) {
			continue
		}
		checked++
		require.Containsf(r.t, req.responseType, r.format.responseType,
			"%s %s?%s answered %d with Content-Type %q", req.method, req.path, req.query.Encode(), req.status, req.responseType)
		if req.requestType != "" {
			require.Equalf(r.t, r.format.contentType, req.requestType, "%s %s sent a body as %q", req.method, req.path, req.requestType)
		}
	}
	require.Positive(r.t, checked, "no resource request was recorded")
}
