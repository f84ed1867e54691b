package discovery_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed31a95821/informer/discovery"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/rest"
)

// serve starts a fakeapi server with the default resources.
func serve(t *testing.T, opts fakeapi.Options) *fakeapi.Server {
	t.Helper()
	srv, err := fakeapi.NewServer(opts)
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	return srv
}

// proxy stands in front of a server and counts the requests that reach
// it. With legacy, it plays a server older than aggregated discovery: it
// strips the aggregated form from every Accept header. fail, when set,
// answers the paths it returns true for with 503, as an aggregated API
// server that is down does.
type proxy struct {
	url      string
	requests atomic.Int64
}

func newProxy(t *testing.T, target string, legacy bool, fail func(path string) bool) *proxy {
	t.Helper()
	u, err := url.Parse(target)
	require.NoError(t, err)
	rp := httputil.NewSingleHostReverseProxy(u)
	tr := &http.Transport{}
	rp.Transport = tr
	t.Cleanup(tr.CloseIdleConnections)
	p := &proxy{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.requests.Add(1)
		if fail != nil && fail(r.URL.Path) {
			http.Error(w, "service unavailable", http.StatusServiceUnavailable)
			return
		}
		if legacy && strings.Contains(r.Header.Get("Accept"), "apidiscovery.k8s.io") {
			r.Header.Set("Accept", "application/json")
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	p.url = ts.URL
	return p
}

// newClient returns a discovery client for host.
func newClient(t *testing.T, cfg rest.Config, opts discovery.Options) *discovery.Client {
	t.Helper()
	rc, err := rest.New(cfg)
	require.NoError(t, err)
	t.Cleanup(rc.CloseIdleConnections)
	return discovery.New(rc, opts)
}
