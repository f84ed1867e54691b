package fakeapi

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

func TestFailNext(t *testing.T) {
	srv := startServer(t, Options{})
	srv.Faults().FailNext(Failure{Verb: "list", Resource: "pods", Count: 2, Code: 429, RetryAfterSeconds: 3})
	for i := 0; i < 2; i++ {
		code, body, header := do(t, http.MethodGet, srv.URL()+"/api/v1/pods", "", "")
		require.Equal(t, http.StatusTooManyRequests, code)
		require.Equal(t, "3", header.Get("Retry-After"))
		st := decodeStatus(t, body)
		require.Equal(t, metav1.StatusReasonTooManyRequests, st.Reason)
		require.Equal(t, int32(3), st.Details.RetryAfterSeconds)
	}
	code, _, _ := do(t, http.MethodGet, srv.URL()+"/api/v1/pods", "", "")
	require.Equal(t, http.StatusOK, code, "only the next two fail")

	srv.Faults().FailNext(Failure{Verb: "get"}) // default 500
	code, _, _ = do(t, http.MethodGet, srv.URL()+"/api/v1/services", "", "")
	require.Equal(t, http.StatusOK, code, "a list is not a get")
	code, body, _ := do(t, http.MethodGet, srv.URL()+"/api/v1/namespaces/ns/services/x", "", "")
	require.Equal(t, http.StatusInternalServerError, code)
	require.Equal(t, metav1.StatusReasonInternalError, decodeStatus(t, body).Reason)
}

func TestLatency(t *testing.T) {
	srv := startServer(t, Options{})
	srv.Faults().SetLatency("list", "pods", 50*time.Millisecond)
	start := time.Now()
	code, _, _ := do(t, http.MethodGet, srv.URL()+"/api/v1/pods", "", "")
	require.Equal(t, http.StatusOK, code)
	require.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond)
	srv.Faults().SetLatency("list", "pods", 0)
	require.Empty(t, srv.Faults().latencies)
}

func TestStallHoldsEventsUntilResumed(t *testing.T) {
	srv := startServer(t, Options{})
	w := openWatch(t, podsURL(srv)+"?watch=true&resourceVersion=0", "")
	// Receiving one event proves the stream is parked waiting for news,
	// so the stall below applies before the next event is fetched.
	seedNamed(t, srv, "ns", "barrier")
	require.Equal(t, "ADDED barrier 1", eventSummary(nextEvent(t, w)))
	srv.Faults().StallWatches("pods", 0)
	seedNamed(t, srv, "ns", "a")
	select {
	case ev := <-w.ResultChan():
		t.Fatalf("a stalled watch sent %s", eventSummary(ev))
	case <-time.After(100 * time.Millisecond):
	}
	srv.Faults().ResumeWatches("pods")
	require.Equal(t, "ADDED a 2", eventSummary(nextEvent(t, w)), "nothing is lost by a stall")

	srv.Faults().StallWatches("pods", 30*time.Millisecond)
	seedNamed(t, srv, "ns", "b")
	require.Equal(t, "ADDED b 3", eventSummary(nextEvent(t, w)), "a timed stall ends by itself")
}

// A hold lets the watch read and encode its events (they are counted as
// held) but write none of them until it ends; then they all come, in
// order. A watch that ends while held still sends what it held.
func TestHoldKeepsEncodedEventsUntilResumed(t *testing.T) {
	srv := startServer(t, Options{})
	w := openWatch(t, podsURL(srv)+"?watch=true&resourceVersion=0", "")
	seedNamed(t, srv, "ns", "barrier")
	require.Equal(t, "ADDED barrier 1", eventSummary(nextEvent(t, w)))
	srv.Faults().HoldWatches("pods")
	seedNamed(t, srv, "ns", "a", "b")
	require.Eventually(t, func() bool { return srv.Faults().HeldFrames("pods") == 2 }, 10*time.Second, time.Millisecond,
		"a held watch encodes its events as they come")
	select {
	case ev := <-w.ResultChan():
		t.Fatalf("a held watch sent %s", eventSummary(ev))
	case <-time.After(50 * time.Millisecond):
	}
	srv.Faults().ResumeWatches("pods")
	require.Equal(t, "ADDED a 2", eventSummary(nextEvent(t, w)))
	require.Equal(t, "ADDED b 3", eventSummary(nextEvent(t, w)))
	require.Zero(t, srv.Faults().HeldFrames("pods"))

	srv.Faults().HoldWatches("")
	seedNamed(t, srv, "ns", "c")
	require.Eventually(t, func() bool { return srv.Faults().HeldFrames("") == 1 }, 10*time.Second, time.Millisecond)
	srv.DropWatches()
	require.Equal(t, "ADDED c 4", eventSummary(nextEvent(t, w)), "a dropped watch sends what it held")
	requireClosed(t, w)
}

// A watch that fails as it starts while held (its resourceVersion is
// compacted) still sends its ERROR: what a watch held goes out however it
// ends, as from a buffering proxy once its upstream ends.
func TestHeldWatchStillSendsItsStartError(t *testing.T) {
	srv := startServer(t, Options{})
	seedNamed(t, srv, "ns", "a", "b")
	srv.Compact()
	srv.Faults().HoldWatches("")
	resp, err := http.Get(podsURL(srv) + "?watch=true&resourceVersion=1")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	require.NoError(t, err)
	require.Contains(t, string(body), `"type":"ERROR"`)
	require.Contains(t, string(body), `"code":410`)
}

func TestCutFrameAbortsTheStream(t *testing.T) {
	srv := startServer(t, Options{})
	seedNamed(t, srv, "ns", "a")
	srv.Faults().CutNextWatchFrame("pods")
	w := openWatch(t, podsURL(srv)+"?watch=true&resourceVersion=0", "")
	// The stream decoder sees a truncated frame and the connection end.
	for ev := range w.ResultChan() {
		require.Equal(t, watch.Error, ev.Type, "no complete event arrives, got %s", eventSummary(ev))
	}
}

func TestMalformedFrameFailsDecoding(t *testing.T) {
	srv := startServer(t, Options{})
	seedNamed(t, srv, "ns", "a", "b")
	srv.Faults().MalformNextWatchFrame("pods")
	resp, err := http.Get(podsURL(srv) + "?watch=true&resourceVersion=0&timeoutSeconds=1")
	require.NoError(t, err)
	defer resp.Body.Close()
	buf := make([]byte, 4096)
	n, _ := resp.Body.Read(buf)
	require.True(t, strings.HasPrefix(string(buf[:n]), `{"type":"ADDED","object":{this is not json}}`), "%q", buf[:n])

	srv.Faults().MalformNextWatchFrame("")
	w := openWatch(t, podsURL(srv)+"?watch=true&resourceVersion=0", "")
	ev := nextEvent(t, w)
	require.Equal(t, watch.Error, ev.Type, "apimachinery's decoder rejects the frame")
}

func TestAdminEndpoints(t *testing.T) {
	srv := startServer(t, Options{Token: "s3cret"})
	auth := []string{"Authorization", "Bearer s3cret"}
	post := func(path, body string) (int, []byte) {
		code, data, _ := do(t, http.MethodPost, srv.URL()+"/fakeapi/v1/"+path, mediaJSON, body, auth...)
		return code, data
	}
	seedNamed(t, srv, "ns", "a", "b")

	w := openWatchWithToken(t, srv, "s3cret")
	code, body := post("drop-watches", "")
	require.Equal(t, http.StatusOK, code, "%s", body)
	require.Equal(t, metav1.StatusSuccess, decodeStatus(t, body).Status)
	requireClosed(t, w)

	code, _ = post("compact", "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, uint64(2), srv.store.log.compacted)

	code, _ = post("faults/fail", `{"verb":"list","resource":"pods","count":1,"code":503,"retryAfterSeconds":2}`)
	require.Equal(t, http.StatusOK, code)
	code, _, header := do(t, http.MethodGet, srv.URL()+"/api/v1/pods", "", "", auth...)
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Equal(t, "2", header.Get("Retry-After"))

	steps := []struct {
		path, body string
		check      func() bool
	}{
		{"faults/latency", `{"verb":"list","resource":"pods","milliseconds":100000}`, func() bool { return len(srv.Faults().latencies) == 1 }},
		{"faults/stall", `{"resource":"pods"}`, func() bool { _, _, ok := srv.Faults().stall("pods"); return ok }},
		{"faults/hold", `{"resource":"services"}`, func() bool { _, _, ok := srv.Faults().hold("services"); return ok }},
		{"faults/cut-frame", `{"resource":"pods"}`, func() bool { return len(srv.Faults().frames) == 1 }},
		{"faults/malformed-frame", `{"resource":"pods"}`, func() bool { return len(srv.Faults().frames) == 2 }},
	}
	for _, step := range steps {
		code, body := post(step.path, step.body)
		require.Equal(t, http.StatusOK, code, "%s: %s", step.path, body)
		require.True(t, step.check(), step.path)
	}
	code, _ = post("faults/reset", "")
	require.Equal(t, http.StatusOK, code)
	require.Empty(t, srv.Faults().frames)
	_, _, stalled := srv.Faults().stall("pods")
	require.False(t, stalled)
	_, _, held := srv.Faults().hold("services")
	require.False(t, held)

	code, body = post("faults/fail", `{"verb":"list","colour":"red"}`)
	require.Equal(t, http.StatusBadRequest, code, "unknown fields are rejected: %s", body)
	code, _ = post("faults/fail", `{"code":200}`)
	require.Equal(t, http.StatusBadRequest, code)
	code, _ = post("nope", "")
	require.Equal(t, http.StatusNotFound, code)
	code, _, _ = do(t, http.MethodGet, srv.URL()+"/fakeapi/v1/compact", "", "", auth...)
	require.Equal(t, http.StatusMethodNotAllowed, code)
	code, _, _ = do(t, http.MethodPost, srv.URL()+"/fakeapi/v1/compact", "", "")
	require.Equal(t, http.StatusUnauthorized, code, "admin endpoints need the token too")
}

func openWatchWithToken(t *testing.T, srv *Server, token string) watch.Interface {
	t.Helper()
	return openWatch(t, srv.URL()+"/api/v1/pods?watch=true&resourceVersion=0", "", "Authorization", "Bearer "+token)
}

// A latency fault must not hold Close. GETs are safe anyway (net/http
// cancels their context when the connection closes), but a request with a
// body that is not read yet gets no such cancellation: only the server can
// end its wait.
func TestCloseEndsRequestsHeldByLatency(t *testing.T) {
	srv, err := NewServer(Options{})
	require.NoError(t, err)
	srv.Faults().SetLatency("create", "pods", time.Minute)
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		resp, err := http.Post(podsURL(srv), mediaJSON, strings.NewReader(podJSON))
		if err == nil {
			resp.Body.Close()
		}
	}()
	waitForGoroutineIn(t, "fakeapi.(*Faults).before")
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		srv.Close()
	}()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("Close still waits for a request held by a latency fault")
	}
	<-answered
	_, err = srv.Create(pod("ns", "late", nil))
	require.NoError(t, err)
	require.Len(t, srv.Writes(), 1, "the held create was not applied after Close")
}

// A stall holds everything a watch would send: the bookmarks that fall due
// during it, and the initial events of a watch that starts during it.
func TestStallHoldsBookmarksAndInitialEvents(t *testing.T) {
	t.Run("bookmark due during the stall", func(t *testing.T) {
		// BookmarkInterval stays a minute: the only bookmark that can come
		// is the one 2s before timeoutSeconds, 3s after the watch starts.
		srv := startServer(t, Options{})
		seedNamed(t, srv, "ns", "a")
		w := openWatch(t, podsURL(srv)+"?watch=true&resourceVersion=1&allowWatchBookmarks=true&timeoutSeconds=5", "")
		seedNamed(t, srv, "ns", "barrier") // moves the RV, so the bookmark is due
		require.Equal(t, "ADDED barrier 2", eventSummary(nextEvent(t, w)))
		srv.Faults().StallWatches("pods", 0)
		if len(srv.SentEvents()) > 1 {
			t.Skip("the bookmark fell due before the stall began: this machine took over 3s to get here")
		}
		// The watch reaches the stall only when its bookmark falls due.
		waitForGoroutineIn(t, "fakeapi.(*watchStream).waitStall")
		for _, ev := range srv.SentEvents()[1:] {
			t.Errorf("a stalled watch sent %s at RV %s", ev.Type, ev.ResourceVersion)
		}
		srv.Faults().ResumeWatches("pods")
		require.Equal(t, "BOOKMARK  2", eventSummary(nextEvent(t, w)), "the bookmark comes after the stall")
	})
	t.Run("initial events of a new watch", func(t *testing.T) {
		srv := startServer(t, Options{})
		seedNamed(t, srv, "ns", "a")
		srv.Faults().StallWatches("pods", 0)
		w := openWatch(t, podsURL(srv)+"?watch=true&resourceVersion=0", "")
		waitForGoroutineIn(t, "fakeapi.(*watchStream).waitStall")
		for _, ev := range srv.SentEvents() {
			t.Errorf("a stalled watch sent %s %s", ev.Type, ev.Name)
		}
		srv.Faults().ResumeWatches("pods")
		require.Equal(t, "ADDED a 1", eventSummary(nextEvent(t, w)), "nothing is lost by a stall")
	})
}

func TestStallOfEveryResource(t *testing.T) {
	f := newFaults()
	f.StallWatches("", 0)
	_, _, stalled := f.stall("pods")
	require.True(t, stalled, "an empty resource matches any")
	f.ResumeWatches("")
	_, _, stalled = f.stall("pods")
	require.False(t, stalled)
}
