package prometheus_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/metrics"
	informerprom "github.com/seed31a95821/informer/metrics/prometheus"
	"github.com/seed31a95821/informer/rest"
	"github.com/seed31a95821/informer/workqueue"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func pod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "web:1"}}},
	}
}

// scrape GETs url and parses the answer with Prometheus's own text parser.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return families
}

// value is the value of the series of name whose labels include want: a
// counter's or gauge's value, a histogram's sample count; -1 if none.
func value(families map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f, ok := families[name]
	if !ok {
		return -1
	}
	for _, m := range f.GetMetric() {
		if !hasLabels(m, want) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	return -1
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
			n++
		}
	}
	return n == len(want)
}

// TestScrapeSeesFiguresMove runs a controller's pipeline (an informer
// against fakeapi, its handler feeding a work queue, a worker draining it)
// with one metrics.Registry, serves it through client_golang's promhttp,
// and scrapes twice around some writes: the queue's, the informer's and the
// requests' figures all move.
func TestScrapeSeesFiguresMove(t *testing.T) {
	reg := new(metrics.Registry)
	pr := prom.NewRegistry()
	pr.MustRegister(informerprom.NewCollector(reg))
	web := httptest.NewServer(promhttp.HandlerFor(pr, promhttp.HandlerOpts{}))
	defer web.Close()

	api, err := fakeapi.NewServer(fakeapi.Options{})
	require.NoError(t, err)
	defer api.Close()
	_, err = api.Create(pod("web-0"))
	require.NoError(t, err)

	q := workqueue.New(workqueue.Options[string]{Name: "pods", Metrics: reg})
	factory := informer.NewFactory(rest.Config{Host: api.URL()}, informer.FactoryOptions{
		Informer: informer.Options{Metrics: reg},
	})
	pods, err := informer.For[*corev1.Pod](factory)
	require.NoError(t, err)
	_, err = pods.AddEventHandler(informer.EnqueueKeys[*corev1.Pod](q), informer.HandlerOptions{Name: "enqueue"})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	factory.Start(ctx)
	defer factory.Shutdown()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer q.ShutDown()
	wg.Go(func() {
		for {
			key, shutdown := q.Get()
			if shutdown {
				return
			}
			q.Done(key)
		}
	})
	require.True(t, factory.WaitForCacheSync(ctx)["pods"])

	queue := map[string]string{"name": "pods"}
	inf := map[string]string{"informer": "pods"}
	handler := map[string]string{"informer": "pods", "handler": "enqueue"}
	added := map[string]string{"informer": "pods", "type": "ADDED"}
	ok := map[string]string{"code": "200", "method": "GET"}
	first := scrape(t, web.URL)
	assert.Equal(t, 1.0, value(first, "informer_synced", inf))

	for i := 1; i <= 3; i++ {
		_, err := api.Create(pod(fmt.Sprint("web-", i)))
		require.NoError(t, err)
	}
	var second map[string]*dto.MetricFamily
	require.Eventually(t, func() bool {
		second = scrape(t, web.URL)
		return value(second, "workqueue_work_duration_seconds", queue) >= value(first, "workqueue_work_duration_seconds", queue)+3
	}, 10*time.Second, 10*time.Millisecond, "the worker handles the three new keys")

	for _, c := range []struct {
		name   string
		labels map[string]string
	}{
		{"workqueue_adds_total", queue},
		{"workqueue_queue_duration_seconds", queue},
		{"informer_watch_events_total", added},
		{"informer_handler_delivered_total", handler},
		{"informer_last_synced_resource_version", inf},
	} {
		before, after := value(first, c.name, c.labels), value(second, c.name, c.labels)
		assert.GreaterOrEqual(t, before, 0.0, "%s is reported", c.name)
		assert.Greater(t, after, before, "%s moved", c.name)
	}
	for _, name := range []string{"workqueue_depth", "workqueue_retries_total", "workqueue_unfinished_work_seconds",
		"workqueue_longest_running_processor_seconds", "informer_lists_total", "informer_watches_total",
		"informer_relists_total", "informer_handler_pending", "informer_handler_coalesced_total"} {
		assert.Contains(t, second, name)
	}
	assert.Positive(t, value(second, "rest_client_requests_total", ok))
	assert.Positive(t, value(second, "rest_client_request_duration_seconds", map[string]string{"verb": "GET"}))
}

// TestTextWriterMatchesClientGolang: the main module's own writer
// (metrics.Registry.Handler, what the demo and the example controller
// serve) passes Prometheus's text parser, and says what client_golang says
// of the same registry: the same families, types, series and values.
func TestTextWriterMatchesClientGolang(t *testing.T) {
	reg := new(metrics.Registry)
	q := workqueue.New(workqueue.Options[string]{Name: "q", Metrics: reg})
	defer q.ShutDown()
	q.Add("a")
	q.Add("b")
	k, _ := q.Get()
	q.Done(k)
	q.AddRateLimited("c")
	require.Eventually(t, func() bool { return q.Len() == 2 }, 10*time.Second, time.Millisecond, "c is back after its 5ms")
	req := httptest.NewRequest(http.MethodGet, "https://api.example/api/v1/pods", nil)
	reg.RecordRequest(req, &http.Response{StatusCode: 200}, nil, 30*time.Millisecond)
	reg.Register(metrics.CollectorFunc(func(emit func(*metrics.Desc, metrics.Sample)) {
		emit(metrics.InformerHandlerPending, metrics.Sample{LabelValues: []string{"pods", `a "quoted"\handler`}, Value: 1})
	}))

	pr := prom.NewRegistry()
	pr.MustRegister(informerprom.NewCollector(reg))
	viaClient := httptest.NewServer(promhttp.HandlerFor(pr, promhttp.HandlerOpts{}))
	defer viaClient.Close()
	viaText := httptest.NewServer(reg.Handler())
	defer viaText.Close()

	// The queue's time-based gauges change between two scrapes: compare
	// everything else exactly.
	// client_golang sorts a series' labels by name, the text writer keeps
	// the family's order: both are valid, so compare them sorted.
	normalize := func(fams map[string]*dto.MetricFamily) map[string]*dto.MetricFamily {
		delete(fams, "workqueue_unfinished_work_seconds")
		delete(fams, "workqueue_longest_running_processor_seconds")
		for _, f := range fams {
			for _, m := range f.GetMetric() {
				slices.SortFunc(m.Label, func(a, b *dto.LabelPair) int { return strings.Compare(a.GetName(), b.GetName()) })
			}
		}
		return fams
	}
	want := normalize(scrape(t, viaClient.URL))
	got := normalize(scrape(t, viaText.URL))
	require.Len(t, got, len(want))
	for name, w := range want {
		g, ok := got[name]
		require.True(t, ok, name)
		assert.Equal(t, w.String(), g.String(), name)
	}
}
