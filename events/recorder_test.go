package events_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer/events"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/rest"
)

func webPod() *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "u-1", ResourceVersion: "7"}}
}

// start runs a recorder against srv until the test ends.
func start(t *testing.T, srv *fakeapi.Server, opts events.Options) *events.Recorder {
	t.Helper()
	rec, err := events.NewRecorder(rest.Config{Host: srv.URL()}, opts)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { rec.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return rec
}

// settle waits until the recorder has handled n events.
func settle(t *testing.T, rec *events.Recorder, n uint64) events.Stats {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s := rec.Stats()
		if s.Created+s.Patched+s.Filtered+s.Failed+s.Invalid >= n {
			return s
		}
		require.True(t, time.Now().Before(deadline), "only %+v of %d events handled", s, n)
		time.Sleep(time.Millisecond)
	}
}

func serveWith(t *testing.T, opts fakeapi.Options) *fakeapi.Server {
	t.Helper()
	srv, err := fakeapi.NewServer(opts)
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	_, err = srv.Create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}})
	require.NoError(t, err)
	return srv
}

// coreOnlyScheme knows core/v1 and no events.k8s.io/v1: a server built on
// it does not serve the new API, like an old cluster.
func coreOnlyScheme(t *testing.T) *runtime.Scheme {
	scheme := runtime.NewScheme()
	require.NoError(t, metav1.AddMetaToScheme(scheme))
	require.NoError(t, corev1.AddToScheme(scheme))
	return scheme
}

// A burst of 20 identical events is one core/v1 Event (the server serves
// no events.k8s.io/v1, so the recorder falls back) whose count is 20: one
// create and 19 patches.
func TestBurstIsOneEventWithItsCount(t *testing.T) {
	srv := serveWith(t, fakeapi.Options{Scheme: coreOnlyScheme(t)})
	rec := start(t, srv, events.Options{Component: "web-controller"})
	for range 20 {
		rec.Eventf(webPod(), corev1.EventTypeNormal, "Synced", "synced %s", "web")
	}
	s := settle(t, rec, 20)
	assert.Equal(t, events.Stats{Created: 1, Patched: 19}, s)

	objs, err := srv.Objects(corev1.SchemeGroupVersion.WithResource("events"))
	require.NoError(t, err)
	require.Len(t, objs, 1)
	ev := objs[0].(*corev1.Event)
	assert.Equal(t, int32(20), ev.Count)
	assert.Equal(t, "synced web", ev.Message)
	assert.Equal(t, "Synced", ev.Reason)
	assert.Equal(t, corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "shop", Name: "web", UID: "u-1", ResourceVersion: "7"},
		ev.InvolvedObject, "the kind found from the Go type")
	assert.Equal(t, "web-controller", ev.Source.Component)
	assert.Equal(t, "web-controller", ev.ReportingController)
}

// A server that serves events.k8s.io/v1 (fakeapi does by default, as a
// view of core/v1 Events) gets those: one Event, its series counting the
// repeats; kubectl get events sees the same object through core/v1.
func TestEventsAPIWhenServed(t *testing.T) {
	srv := serveWith(t, fakeapi.Options{})
	rec := start(t, srv, events.Options{Component: "web-controller", Instance: "web-controller-0"})
	for range 5 {
		rec.Eventf(webPod(), corev1.EventTypeWarning, "FailedSync", "boom")
	}
	assert.Equal(t, events.Stats{Created: 1, Patched: 4}, settle(t, rec, 5))
	objs, err := srv.Objects(eventsv1.SchemeGroupVersion.WithResource("events"))
	require.NoError(t, err)
	require.Len(t, objs, 1)
	ev := objs[0].(*eventsv1.Event)
	require.NotNil(t, ev.Series)
	assert.Equal(t, int32(5), ev.Series.Count)
	assert.Equal(t, "boom", ev.Note)
	assert.Equal(t, "FailedSync", ev.Action)
	assert.Equal(t, "web-controller-0", ev.ReportingInstance)
	assert.False(t, ev.EventTime.IsZero())
	core, err := srv.Objects(corev1.SchemeGroupVersion.WithResource("events"))
	require.NoError(t, err)
	require.Len(t, core, 1, "one object, two versions")
	assert.Equal(t, "boom", core[0].(*corev1.Event).Message)
	assert.Equal(t, ev.ResourceVersion, core[0].(*corev1.Event).ResourceVersion)
}

// The spam filter lets the burst through and drops the rest; another
// object has a bucket of its own.
func TestSpamFilterPerObject(t *testing.T) {
	srv := serveWith(t, fakeapi.Options{})
	rec := start(t, srv, events.Options{Component: "c", SpamBurst: 5})
	for i := range 8 {
		rec.Eventf(webPod(), corev1.EventTypeNormal, "Tick", "tick %d", i)
	}
	other := webPod()
	other.Name, other.UID = "api", "u-2"
	rec.Eventf(other, corev1.EventTypeNormal, "Tick", "tick")
	s := settle(t, rec, 9)
	assert.Equal(t, uint64(3), s.Filtered)
	assert.Equal(t, uint64(6), s.Created)
}

// Objects without metadata or kind, nil objects and unknown event types
// are refused and counted, never written or panicked on.
func TestInvalidEventsAreCounted(t *testing.T) {
	srv := serveWith(t, fakeapi.Options{})
	rec := start(t, srv, events.Options{Component: "c"})
	rec.Eventf(&metav1.Status{}, corev1.EventTypeNormal, "R", "m")
	rec.Eventf(webPod(), "Bad", "R", "m")
	kindless := &unstructured.Unstructured{}
	kindless.SetName("x")
	kindless.SetNamespace("shop")
	rec.Eventf(kindless, corev1.EventTypeNormal, "R", "m")
	rec.Eventf(nil, corev1.EventTypeNormal, "R", "m")
	rec.Eventf((*corev1.Pod)(nil), corev1.EventTypeNormal, "R", "m")
	rec.Eventf(webPod(), corev1.EventTypeNormal, "", "no reason")
	rec.Eventf(webPod(), corev1.EventTypeNormal, strings.Repeat("R", 129), "a reason too long")
	assert.Equal(t, events.Stats{Invalid: 7}, settle(t, rec, 7))
}

// Options the API server would refuse in every Event are refused at once.
func TestNewRecorderChecksOptions(t *testing.T) {
	for _, opts := range []events.Options{
		{},
		{Component: "has spaces"},
		{Component: "ok", Instance: strings.Repeat("i", 129)},
	} {
		_, err := events.NewRecorder(rest.Config{Host: "http://127.0.0.1:1"}, opts)
		assert.ErrorIs(t, err, events.ErrInvalidOptions, "%+v", opts)
	}
	_, err := events.NewRecorder(rest.Config{Host: "http://127.0.0.1:1"}, events.Options{Component: "example.com/web-controller"})
	assert.NoError(t, err)
}

// stalledServer accepts connections and never answers, until the test
// ends.
func stalledServer(tb testing.TB) string {
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	}))
	tb.Cleanup(func() { close(stop); srv.Close() })
	return srv.URL
}

// With the server stalled, Eventf still returns at once: the queue fills,
// then every event is dropped and counted.
func TestEventfNeverBlocks(t *testing.T) {
	rec, err := events.NewRecorder(rest.Config{Host: stalledServer(t)}, events.Options{Component: "c", QueueSize: 10})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { rec.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()
	began := time.Now()
	for i := range 1000 {
		rec.Eventf(webPod(), corev1.EventTypeNormal, "Tick", "tick %d", i)
	}
	assert.Less(t, time.Since(began), 5*time.Second, "1000 calls should take microseconds each")
	s := rec.Stats()
	assert.GreaterOrEqual(t, s.Dropped, uint64(1000-11), "the queue holds 10 and the writer one")
	assert.Zero(t, s.Created)
}

// BenchmarkEventfStalledServer measures Eventf with the API server never
// answering: after the queue fills, each call is a drop, without an
// allocation.
func BenchmarkEventfStalledServer(b *testing.B) {
	rec, err := events.NewRecorder(rest.Config{Host: stalledServer(b)}, events.Options{Component: "c"})
	require.NoError(b, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { rec.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()
	pod := webPod()
	for range events.DefaultQueueSize + 1 {
		rec.Eventf(pod, corev1.EventTypeNormal, "Synced", "synced")
	}
	b.ReportAllocs()
	for b.Loop() {
		rec.Eventf(pod, corev1.EventTypeNormal, "Synced", "synced")
	}
	b.ReportMetric(float64(rec.Stats().Dropped)/float64(b.N), "drops/op")
}

// A write that fails with a server error is tried again after a pause; one
// the server refuses is given up at once and counted.
func TestWritesRetryServerErrorsOnly(t *testing.T) {
	srv := serveWith(t, fakeapi.Options{})
	rec := start(t, srv, events.Options{Component: "c"})
	rec.Eventf(webPod(), corev1.EventTypeNormal, "First", "settles the API in use")
	settle(t, rec, 1)

	srv.Faults().FailNext(fakeapi.Failure{Verb: "create", Resource: "events", Code: http.StatusServiceUnavailable})
	rec.Eventf(webPod(), corev1.EventTypeNormal, "Second", "after one 503")
	assert.Equal(t, events.Stats{Created: 2}, settle(t, rec, 2))

	srv.Faults().FailNext(fakeapi.Failure{Verb: "create", Resource: "events", Code: http.StatusForbidden})
	began := time.Now()
	rec.Eventf(webPod(), corev1.EventTypeNormal, "Third", "forbidden")
	assert.Equal(t, events.Stats{Created: 2, Failed: 1}, settle(t, rec, 3))
	assert.Less(t, time.Since(began), 900*time.Millisecond, "a 403 is not retried (the first pause is 1s)")
	objs, err := srv.Objects(corev1.SchemeGroupVersion.WithResource("events"))
	require.NoError(t, err)
	assert.Len(t, objs, 2)
}
