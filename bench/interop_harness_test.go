package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/seed31a95821/informer/fakeapi"
)

// The pieces the interop tests share: a log of every HTTP request client-go
// makes (to prove which protocol it used, not only that it worked), a
// handler that keeps its own copy of what it was told (to prove events
// reach handlers, not only the cache), and the convergence check.

// wireFormat is one content type client-go can be configured to speak.
type wireFormat struct {
	name string
	// contentType is rest.Config.ContentType: what client-go encodes
	// request bodies in and asks for first.
	contentType string
	// accept is rest.Config.AcceptContentTypes.
	accept string
	// responseType is the media type every list and watch answer must
	// carry, proving the server really answered in this format.
	responseType string
}

var wireFormats = []wireFormat{
	{name: "json", contentType: "application/json", accept: "application/json", responseType: "application/json"},
	{
		name:         "protobuf",
		contentType:  "application/vnd.kubernetes.protobuf",
		accept:       "application/vnd.kubernetes.protobuf,application/json",
		responseType: "application/vnd.kubernetes.protobuf",
	},
}

// restConfig points client-go at srv, speaking format, with every request
// recorded in log.
func restConfig(srv *fakeapi.Server, format wireFormat, log *requestLog) *rest.Config {
	return &rest.Config{
		Host: srv.URL(),
		ContentConfig: rest.ContentConfig{
			ContentType:        format.contentType,
			AcceptContentTypes: format.accept,
		},
		// client-go's default client-side rate limit (5 QPS, burst 10)
		// would pace our writes; a real test cluster has no such limit.
		QPS:           1000,
		Burst:         1000,
		WrapTransport: log.wrap,
	}
}

// request is what the log keeps of one round trip.
type request struct {
	method string
	path   string
	query  url.Values
	// requestType is the Content-Type of the request body, if any.
	requestType string
	// status and responseType describe the answer's headers; status is 0
	// when the round trip failed.
	status       int
	responseType string
}

// isWatchList reports whether r is a WatchList request (KEP-3157): a watch
// that starts by replaying the current state and marks its end with a
// bookmark.
func (r request) isWatchList() bool {
	return r.method == http.MethodGet && r.query.Get("watch") == "true" &&
		r.query.Get("sendInitialEvents") == "true" &&
		r.query.Get("resourceVersionMatch") == string(metav1.ResourceVersionMatchNotOlderThan) &&
		r.query.Get("allowWatchBookmarks") == "true"
}

// isPlainList reports whether r is a classic LIST (a GET of a collection
// without watch), which client-go sends only when WatchList is off or has
// failed.
func (r request) isPlainList() bool {
	return r.method == http.MethodGet && r.query.Get("watch") != "true"
}

// requestLog records every request sent through the transport it wraps.
// It is safe for concurrent use.
type requestLog struct {
	mu       sync.Mutex // guards requests
	requests []request
}

// wrap is a rest.Config.WrapTransport.
func (l *requestLog) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		rec := request{method: req.Method, path: req.URL.Path, query: req.URL.Query(),
			requestType: req.Header.Get("Content-Type")}
		resp, err := next.RoundTrip(req)
		if err == nil {
			rec.status = resp.StatusCode
			rec.responseType = resp.Header.Get("Content-Type")
		}
		l.mu.Lock()
		l.requests = append(l.requests, rec)
		l.mu.Unlock()
		return resp, err
	})
}

// to returns the recorded requests whose path is path.
func (l *requestLog) to(path string) []request {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []request
	for _, r := range l.requests {
		if r.path == path {
			out = append(out, r)
		}
	}
	return out
}

// all returns a copy of every recorded request.
func (l *requestLog) all() []request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.requests)
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// handlerView is an event handler that applies what it is told to its own
// map, key -> resourceVersion. If the informer delivers every change, the
// map ends equal to the server's objects. It is safe for concurrent use.
type handlerView struct {
	mu   sync.Mutex        // guards seen and deletes
	seen map[string]string // namespace/name -> resourceVersion
	// deletes records each key deleted, and whether the handler got it
	// as a cache.DeletedFinalStateUnknown tombstone: the informer's way of
	// saying "this is gone, found by a relist, final state unknown".
	deletes map[string]bool
}

func newHandlerView() *handlerView {
	return &handlerView{seen: map[string]string{}, deletes: map[string]bool{}}
}

func (h *handlerView) handlers() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { h.put(obj) },
		UpdateFunc: func(_, obj any) { h.put(obj) },
		DeleteFunc: h.remove,
	}
}

func (h *handlerView) put(obj any) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return // left out of the view, so the convergence check fails
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen[m.GetNamespace()+"/"+m.GetName()] = m.GetResourceVersion()
}

func (h *handlerView) remove(obj any) {
	key, tombstone := "", false
	switch o := obj.(type) {
	case cache.DeletedFinalStateUnknown:
		key, tombstone = o.Key, true
	default:
		m, err := meta.Accessor(obj)
		if err != nil {
			return
		}
		key = m.GetNamespace() + "/" + m.GetName()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.seen, key)
	h.deletes[key] = tombstone
}

// state returns a copy of the view.
func (h *handlerView) state() map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]string, len(h.seen))
	for k, v := range h.seen {
		out[k] = v
	}
	return out
}

// deleted reports whether key was deleted, and whether as a tombstone.
func (h *handlerView) deleted(key string) (seen, tombstone bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	tombstone, seen = h.deletes[key]
	return seen, tombstone
}

// serverState is the server's truth for gvr: namespace/name -> resourceVersion.
func serverState(t require.TestingT, srv *fakeapi.Server, gvr schema.GroupVersionResource) map[string]string {
	objs, err := srv.Objects(gvr)
	require.NoError(t, err)
	out := make(map[string]string, len(objs))
	for _, o := range objs {
		m, err := meta.Accessor(o)
		require.NoError(t, err)
		out[m.GetNamespace()+"/"+m.GetName()] = m.GetResourceVersion()
	}
	return out
}

// cacheState is what a lister holds, in the same shape as serverState.
func cacheState[T metav1.Object](items []T) map[string]string {
	out := make(map[string]string, len(items))
	for _, m := range items {
		out[m.GetNamespace()+"/"+m.GetName()] = m.GetResourceVersion()
	}
	return out
}

// converges waits until got() equals the server's state of gvr, and fails
// with a diff of the last attempt if that never happens.
func converges(t *testing.T, srv *fakeapi.Server, gvr schema.GroupVersionResource, what string, got func() map[string]string) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, serverState(c, srv, gvr), got(), "%s of %s differs from the server", what, gvr.Resource)
	}, convergeTimeout, 10*time.Millisecond)
}

// convergeTimeout bounds each convergence. A relist after a 410 waits for
// client-go's backoff (about a second), so this is generous but far below
// what would hide a hang.
const convergeTimeout = 15 * time.Second

// postAdmin drives one of fakeapi's HTTP admin endpoints, as an
// out-of-process test would.
func postAdmin(t *testing.T, srv *fakeapi.Server, action, body string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL()+"/fakeapi/v1/"+action, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "POST %s", action)
}

// countSent counts the events fakeapi recorded on watches of gvr that match.
func countSent(srv *fakeapi.Server, gvr schema.GroupVersionResource, match func(fakeapi.SentEvent) bool) int {
	n := 0
	for _, e := range srv.SentEvents() {
		if e.Resource == gvr && match(e) {
			n++
		}
	}
	return n
}

// isInitialEventsEnd matches the bookmark that closes a WatchList replay.
func isInitialEventsEnd(e fakeapi.SentEvent) bool {
	return e.InitialEvent && e.Type == "BOOKMARK"
}

func key(namespace, name string) string { return fmt.Sprintf("%s/%s", namespace, name) }
