package metrics

import (
	"net/http"
	"strconv"
	"time"
)

// RecordRequest reports one request to the API server under client-go's
// rest_client_* names: a count by outcome (the status code, or "<error>"
// when no response came), method and host, and the latency to the response
// headers by method and host (for a watch, how long the server took to start
// streaming). The informers' wire and the client call it for every request;
// it does nothing when r is nil.
func (r *Registry) RecordRequest(req *http.Request, resp *http.Response, err error, elapsed time.Duration) {
	if r == nil {
		return
	}
	code := "<error>"
	if err == nil && resp != nil {
		code = strconv.Itoa(resp.StatusCode)
	}
	host := req.URL.Host
	r.Count(RESTClientRequests, code, req.Method, host).Inc()
	r.Observer(RESTClientRequestDuration, req.Method, host).Observe(elapsed.Seconds())
}
