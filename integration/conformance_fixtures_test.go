package integration

import (
	"fmt"
	"maps"
	"strconv"
	"sync"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/reflector"
)

// Fixtures: the objects scenarios create.

const (
	podsPath        = "/api/v1/namespaces/%s/pods"
	servicesPath    = "/api/v1/namespaces/%s/services"
	configMapsPath  = "/api/v1/namespaces/%s/configmaps"
	deploymentsPath = "/apis/apps/v1/namespaces/%s/deployments"
)

func (e *env) path(format string) string { return fmt.Sprintf(format, e.ns) }

// testPod is the smallest pod the real server accepts: one container.
func testPod(ns, name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.invalid/app:1"}}},
	}
}

func testService(ns, name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}, Selector: map[string]string{"app": "web"}},
	}
}

func testConfigMap(ns, name, value string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"k": value}}
}

func testDeployment(ns, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.invalid/app:1"}}},
			},
		},
	}
}

var (
	web = map[string]string{"app": "web"}
	db  = map[string]string{"app": "db"}
)

// seedPods creates web-0, web-1 (app=web) and db-0 (app=db).
func (e *env) seedPods() {
	for _, p := range []*corev1.Pod{testPod(e.ns, "web-0", web), testPod(e.ns, "web-1", web), testPod(e.ns, "db-0", db)} {
		create(e.t, e.client, p)
	}
}

// Checks: what a scenario waits for.

// cacheState is what an informer holds: key -> resourceVersion.
func cacheState[T runtime.Object](inf *informer.SharedInformer[T]) map[string]string {
	objs := inf.Indexer().List()
	state := make(map[string]string, len(objs))
	for _, o := range objs {
		if key, rv, err := keyAndRV(o); err == nil {
			state[key] = rv
		}
	}
	return state
}

// requireConverges waits until the informer holds exactly what the server
// lists (with the informer's label selector), object for object and version
// for version.
func requireConverges[T runtime.Object](e *env, inf *informer.SharedInformer[T], collection, selector string) {
	e.t.Helper()
	var want, got map[string]string
	ok := waitUntil(convergeWithin, func() bool {
		want, got = listState(e.t, e.client, collection, selector), cacheState(inf)
		return maps.Equal(want, got)
	})
	require.True(e.t, ok, "cache of %s never converged\nserver: %v\ncache:  %v\nstats: %+v", collection, want, got, inf.Stats())
}

// requireStats waits until cond holds for the informer's reflector
// statistics and returns them; what says what never happened. The reflector
// updates its statistics just after the store takes a change, so a test
// that has seen a change in the cache may still have to wait for them.
func requireStats[T runtime.Object](e *env, inf *informer.SharedInformer[T], what string, cond func(reflector.Stats) bool) reflector.Stats {
	e.t.Helper()
	var s reflector.Stats
	require.True(e.t, waitUntil(convergeWithin, func() bool {
		s = inf.Stats()
		return cond(s)
	}), "%s: %+v", what, s)
	return s
}

// requireWatching waits until the informer's reflector has a watch open, so
// that a fault injected next hits a watch and not the initial list.
func requireWatching[T runtime.Object](e *env, inf *informer.SharedInformer[T]) {
	e.t.Helper()
	requireStats(e, inf, "never watching", func(s reflector.Stats) bool {
		return s.Watches >= 1 && s.State == reflector.StateWatching
	})
}

func mustFor[T runtime.Object](e *env, f *informer.Factory) *informer.SharedInformer[T] {
	e.t.Helper()
	inf, err := informer.For[T](f)
	require.NoError(e.t, err)
	return inf
}

func rvNumber(e *env, rv string) uint64 {
	e.t.Helper()
	n, err := strconv.ParseUint(rv, 10, 64)
	require.NoError(e.t, err, "resourceVersion %q", rv)
	return n
}

// eventLog records what a handler was told, for scenarios that check the
// notifications and not only the cache. It is safe for concurrent use.
type eventLog struct {
	mu      sync.Mutex        // guards the fields below
	state   map[string]string // key -> RV, built from notifications alone
	adds    map[string]int
	deletes map[string][]bool // key -> finalStateUnknown of each delete
}

func newEventLog() *eventLog {
	return &eventLog{state: map[string]string{}, adds: map[string]int{}, deletes: map[string][]bool{}}
}

func (l *eventLog) handler() informer.Handler[*corev1.Pod] {
	key := func(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }
	return informer.Handler[*corev1.Pod]{
		OnAdd: func(p *corev1.Pod, _ bool) {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.state[key(p)] = p.ResourceVersion
			l.adds[key(p)]++
		},
		OnUpdate: func(_, p *corev1.Pod) {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.state[key(p)] = p.ResourceVersion
		},
		OnDelete: func(p *corev1.Pod, unknown bool) {
			l.mu.Lock()
			defer l.mu.Unlock()
			delete(l.state, key(p))
			l.deletes[key(p)] = append(l.deletes[key(p)], unknown)
		},
	}
}

func (l *eventLog) snapshot() (state map[string]string, adds map[string]int, deletes map[string][]bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	deletes = make(map[string][]bool, len(l.deletes))
	for k, v := range l.deletes {
		deletes[k] = append([]bool(nil), v...)
	}
	return maps.Clone(l.state), maps.Clone(l.adds), deletes
}
