package metrics_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed31a95821/informer/metrics"
)

var (
	hist = &metrics.Desc{Name: "t_seconds", Help: "A histogram.", Kind: metrics.Histogram,
		Labels: []string{"name"}, Buckets: []float64{0.1, 1}}
	gauge = &metrics.Desc{Name: "t_depth", Help: "A \"gauge\"\\.", Kind: metrics.Gauge, Labels: []string{"name"}}
	count = &metrics.Desc{Name: "t_total", Help: "A counter.", Kind: metrics.Counter}
)

func TestWriteText(t *testing.T) {
	var r metrics.Registry
	o := r.Observer(hist, "q")
	o.Observe(0.05)
	o.Observe(0.5)
	o.Observe(5)
	require.Same(t, o, r.Observer(hist, "q"), "one series per label values")
	r.Count(count).Inc()
	unregister := r.Register(metrics.CollectorFunc(func(emit func(*metrics.Desc, metrics.Sample)) {
		emit(gauge, metrics.Sample{LabelValues: []string{"b\"\n"}, Value: 2})
		emit(gauge, metrics.Sample{LabelValues: []string{"a"}, Value: 1.5})
	}))
	var b strings.Builder
	require.NoError(t, r.WriteText(&b))
	assert.Equal(t, `# HELP t_depth A "gauge"\\.
# TYPE t_depth gauge
t_depth{name="a"} 1.5
t_depth{name="b\"\n"} 2
# HELP t_seconds A histogram.
# TYPE t_seconds histogram
t_seconds_bucket{name="q",le="0.1"} 1
t_seconds_bucket{name="q",le="1"} 2
t_seconds_bucket{name="q",le="+Inf"} 3
t_seconds_sum{name="q"} 5.55
t_seconds_count{name="q"} 3
# HELP t_total A counter.
# TYPE t_total counter
t_total 1
`, b.String())

	unregister()
	b.Reset()
	require.NoError(t, r.WriteText(&b))
	assert.NotContains(t, b.String(), "t_depth", "an unregistered collector is gone")
}

// TestNilRegistryIsNoOp: a part given no Registry pays nothing and fails
// nothing.
func TestNilRegistryIsNoOp(t *testing.T) {
	var r *metrics.Registry
	r.Observer(hist, "q").Observe(1)
	r.Count(count).Inc()
	r.Register(metrics.CollectorFunc(func(func(*metrics.Desc, metrics.Sample)) { t.Fatal("collected") }))()
	assert.Empty(t, r.Gather())
	var b strings.Builder
	require.NoError(t, r.WriteText(&b))
	assert.Empty(t, b.String())
}

// TestRecordRequestWithoutResponse: a request that got no answer counts
// as "<error>", as client-go's does.
func TestRecordRequestWithoutResponse(t *testing.T) {
	var r metrics.Registry
	req := httptest.NewRequest(http.MethodGet, "https://api.example:6443/api/v1/pods", nil)
	r.RecordRequest(req, nil, errors.New("connection refused"), time.Second)
	fams := r.Gather()
	require.Len(t, fams, 2)
	assert.Equal(t, "rest_client_request_duration_seconds", fams[0].Desc.Name)
	assert.Equal(t, 1.0, fams[0].Samples[0].Sum)
	assert.Equal(t, "rest_client_requests_total", fams[1].Desc.Name)
	assert.Equal(t, []string{"<error>", "GET", "api.example:6443"}, fams[1].Samples[0].LabelValues)
}

// TestSameSeriesAreAdded: two parts reporting one series (two queues both
// named "q") make one series, their sum, which a scraper accepts.
func TestSameSeriesAreAdded(t *testing.T) {
	var r metrics.Registry
	for _, v := range []float64{2, 3} {
		r.Register(metrics.CollectorFunc(func(emit func(*metrics.Desc, metrics.Sample)) {
			emit(gauge, metrics.Sample{LabelValues: []string{"q"}, Value: v})
		}))
	}
	fams := r.Gather()
	require.Len(t, fams, 1)
	assert.Equal(t, []metrics.Sample{{LabelValues: []string{"q"}, Value: 5}}, fams[0].Samples)
}
