package client_test

import (
	"net/url"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/seed31a95821/informer/client"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/metrics"
	"github.com/seed31a95821/informer/rest"
)

// TestRequestMetrics: with rest.Config.Metrics, every request is counted by
// code, method and host, and timed, under client-go's rest_client_* names.
func TestRequestMetrics(t *testing.T) {
	srv := serve(t, fakeapi.Options{})
	reg := new(metrics.Registry)
	c, err := client.New(rest.Config{Host: srv.URL(), Metrics: reg}, client.Options{})
	require.NoError(t, err)
	pods, err := client.For[*corev1.Pod](c)
	require.NoError(t, err)
	createNamespace(t, rest.Config{Host: srv.URL()}, "shop")
	_, err = pods.Create(t.Context(), newPod("web"), metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = pods.Get(t.Context(), "shop", "gone", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err))

	u, err := url.Parse(srv.URL())
	require.NoError(t, err)
	got := map[string]float64{}
	for _, f := range reg.Gather() {
		for _, s := range f.Samples {
			require.Equal(t, u.Host, s.LabelValues[len(s.LabelValues)-1], "labelled by host")
			if f.Desc == metrics.RESTClientRequests {
				got[s.LabelValues[0]+" "+s.LabelValues[1]] = s.Value
			} else {
				got[f.Desc.Name+" "+s.LabelValues[0]] = float64(s.Count)
			}
		}
	}
	assert.Equal(t, map[string]float64{
		"200 GET":  2, // For's discovery: /api and /apis
		"201 POST": 1, "404 GET": 1,
		"rest_client_request_duration_seconds POST": 1, "rest_client_request_duration_seconds GET": 3,
	}, got)
}
