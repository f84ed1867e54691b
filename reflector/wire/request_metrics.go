package wire

import (
	"net/http"
	"strconv"
	"time"

	"github.com/seed31a95821/informer/metrics"
)

// recordRequest reports one request to Options.Metrics under client-go's
// rest_client_* names: its outcome (the status code, or "<error>" when no
// response came) and its latency to the response headers, which for a
// watch is how long the server took to start streaming. Nothing is done
// without a registry.
func (lw *ListerWatcher) recordRequest(req *http.Request, resp *http.Response, err error, start time.Time) {
	r := lw.opts.Metrics
	if r == nil {
		return
	}
	code := "<error>"
	if err == nil {
		code = strconv.Itoa(resp.StatusCode)
	}
	host := req.URL.Host
	r.Count(metrics.RESTClientRequests, code, req.Method, host).Inc()
	r.Observer(metrics.RESTClientRequestDuration, req.Method, host).Observe(time.Since(start).Seconds())
}
