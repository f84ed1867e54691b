package fakeapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

func podsURL(srv *Server) string { return srv.URL() + "/api/v1/namespaces/ns/pods" }

func TestWatchFromResourceVersionResumes(t *testing.T) {
	srv := startServer(t, Options{})
	seedNamed(t, srv, "ns", "a", "b") // RVs 1, 2
	w := openWatch(t, podsURL(srv)+"?watch=true&resourceVersion=1", "")
	require.Equal(t, "ADDED b 2", eventSummary(nextEvent(t, w)), "only events after RV 1")

	_, err := srv.Update(pod("ns", "a", map[string]string{"v": "2"}))
	require.NoError(t, err)
	require.NoError(t, srv.Delete(pod("ns", "b", nil)))
	require.Equal(t, "MODIFIED a 3", eventSummary(nextEvent(t, w)))
	require.Equal(t, "DELETED b 4", eventSummary(nextEvent(t, w)), "a delete carries the deletion RV")
}

func TestWatchWithoutResourceVersionReplaysState(t *testing.T) {
	srv := startServer(t, Options{})
	seedNamed(t, srv, "ns", "a", "b")
	for _, rv := range []string{"", "0"} {
		t.Run("rv="+rv, func(t *testing.T) {
			w := openWatch(t, podsURL(srv)+"?watch=true&resourceVersion="+rv, "")
			require.Equal(t, "ADDED a 1", eventSummary(nextEvent(t, w)))
			require.Equal(t, "ADDED b 2", eventSummary(nextEvent(t, w)))
		})
	}
	for _, rv := range []string{"", "0"} {
		t.Run("rv="+rv+" with bookmarks", func(t *testing.T) {
			// As kube-apiserver does, the legacy watch becomes a WatchList:
			// the replay ends with the annotated bookmark.
			w := openWatch(t, podsURL(srv)+"?watch=true&allowWatchBookmarks=true&resourceVersion="+rv, "")
			require.Equal(t, "ADDED a 1", eventSummary(nextEvent(t, w)))
			require.Equal(t, "ADDED b 2", eventSummary(nextEvent(t, w)))
			bm := nextEvent(t, w)
			require.Equal(t, "BOOKMARK  2", eventSummary(bm))
			m, err := meta.Accessor(bm.Object)
			require.NoError(t, err)
			require.Equal(t, "true", m.GetAnnotations()[metav1.InitialEventsAnnotationKey])
		})
	}
	t.Run("sendInitialEvents=false", func(t *testing.T) {
		w := openWatch(t, podsURL(srv)+"?watch=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan", "")
		seedNamed(t, srv, "ns", "c")
		require.Equal(t, "ADDED c 3", eventSummary(nextEvent(t, w)), "no replay, only new events")
	})
}

func TestWatchTooOldIsAnErrorEventIn200Stream(t *testing.T) {
	srv := startServer(t, Options{CompactionWindow: 2})
	seedNamed(t, srv, "ns", "a", "b", "c", "d") // the log keeps RVs 3, 4
	w := openWatch(t, podsURL(srv)+"?watch=true&resourceVersion=1", "")
	ev := nextEvent(t, w)
	require.Equal(t, watch.Error, ev.Type)
	st := ev.Object.(*metav1.Status)
	require.Equal(t, int32(http.StatusGone), st.Code)
	require.Equal(t, metav1.StatusReasonExpired, st.Reason)
	require.Equal(t, "too old resource version: 1 (2)", st.Message)
	requireClosed(t, w)

	w = openWatch(t, podsURL(srv)+"?watch=true&resourceVersion=2", "")
	require.Equal(t, "ADDED c 3", eventSummary(nextEvent(t, w)), "RV 2 is still resumable")
}

func TestWatchAfterCompactAndDrop(t *testing.T) {
	srv := startServer(t, Options{})
	seedNamed(t, srv, "ns", "a")
	w := openWatch(t, podsURL(srv)+"?watch=true&resourceVersion=1", "")
	srv.DropWatches()
	requireClosed(t, w)

	seedNamed(t, srv, "ns", "b")
	srv.Compact()
	w = openWatch(t, podsURL(srv)+"?watch=true&resourceVersion=1", "")
	require.Equal(t, "ERROR Expired", eventSummary(nextEvent(t, w)))
}

func TestWatchListSendsInitialEventsThenAnnotatedBookmark(t *testing.T) {
	srv := startServer(t, Options{})
	seedNamed(t, srv, "ns", "a", "b")
	// This is the request client-go v0.37's reflector makes by default.
	w := openWatch(t, podsURL(srv)+"?watch=true&sendInitialEvents=true&allowWatchBookmarks=true"+
		"&resourceVersionMatch=NotOlderThan&resourceVersion=&timeoutSeconds=60", "")
	require.Equal(t, "ADDED a 1", eventSummary(nextEvent(t, w)))
	require.Equal(t, "ADDED b 2", eventSummary(nextEvent(t, w)))
	bm := nextEvent(t, w)
	require.Equal(t, "BOOKMARK  2", eventSummary(bm))
	m, err := meta.Accessor(bm.Object)
	require.NoError(t, err)
	require.Equal(t, map[string]string{metav1.InitialEventsAnnotationKey: "true"}, m.GetAnnotations())
	_, isPod := bm.Object.(*corev1.Pod)
	require.True(t, isPod, "a bookmark carries an object of the watched kind")

	seedNamed(t, srv, "ns", "c")
	require.Equal(t, "ADDED c 3", eventSummary(nextEvent(t, w)))

	sent := srv.SentEvents()
	require.True(t, sent[0].InitialEvent)
	require.Equal(t, watch.Bookmark, sent[2].Type)
	require.True(t, sent[2].InitialEvent)
	require.False(t, sent[3].InitialEvent)
}

func TestWatchListFromFutureResourceVersion(t *testing.T) {
	srv := startServer(t, Options{})
	w := openWatch(t, podsURL(srv)+"?watch=true&sendInitialEvents=true&allowWatchBookmarks=true"+
		"&resourceVersionMatch=NotOlderThan&resourceVersion=10", "")
	ev := nextEvent(t, w)
	require.Equal(t, watch.Error, ev.Type)
	st := ev.Object.(*metav1.Status)
	require.Equal(t, metav1.StatusReasonTimeout, st.Reason)
	require.Equal(t, metav1.CauseTypeResourceVersionTooLarge, st.Details.Causes[0].Type)
}

func TestWatchPeriodicBookmarks(t *testing.T) {
	srv := startServer(t, Options{BookmarkInterval: 20 * time.Millisecond})
	seedNamed(t, srv, "ns", "a")
	w := openWatch(t, podsURL(srv)+"?watch=true&resourceVersion=1&allowWatchBookmarks=true", "")
	seedNamed(t, srv, "other", "x") // another namespace moves the RV
	for {
		ev := nextEvent(t, w)
		require.Equal(t, watch.Bookmark, ev.Type)
		m, _ := meta.Accessor(ev.Object)
		if m.GetResourceVersion() == "2" {
			break // the bookmark reached the write the watch cannot see
		}
	}
}

// The real watch cache sends a bookmark 2s before a watch's timeoutSeconds,
// but only when the resourceVersion has moved since the watch began.
// BookmarkInterval is left at a minute so that only that bookmark can come.
func TestWatchBookmarkBeforeTimeout(t *testing.T) {
	t.Run("RV moved", func(t *testing.T) {
		t.Parallel()
		srv := startServer(t, Options{})
		seedNamed(t, srv, "ns", "a")
		w := openWatch(t, podsURL(srv)+"?watch=true&resourceVersion=1&allowWatchBookmarks=true&timeoutSeconds=3", "")
		seedNamed(t, srv, "other", "x") // RV 2, invisible to this watch
		ev := nextEvent(t, w)
		require.Equal(t, "BOOKMARK  2", eventSummary(ev))
		requireClosed(t, w)
	})
	t.Run("RV unchanged", func(t *testing.T) {
		t.Parallel()
		srv := startServer(t, Options{})
		seedNamed(t, srv, "ns", "a")
		w := openWatch(t, podsURL(srv)+"?watch=true&resourceVersion=1&allowWatchBookmarks=true&timeoutSeconds=3", "")
		for ev := range w.ResultChan() {
			t.Fatalf("a watch whose RV never moved got %s", eventSummary(ev))
		}
	})
}

func TestWatchTimeoutClosesStream(t *testing.T) {
	srv := startServer(t, Options{})
	w := openWatch(t, podsURL(srv)+"?watch=true&resourceVersion=0&timeoutSeconds=1", "")
	requireClosed(t, w)
}

func TestWatchSelectorTransitions(t *testing.T) {
	srv := startServer(t, Options{})
	w := openWatch(t, podsURL(srv)+"?watch=true&resourceVersion=0&labelSelector=app%3Dweb", "")
	seedNamed(t, srv, "ns", "other")
	web := pod("ns", "p", map[string]string{"app": "web"})
	_, err := srv.Create(web) // RV 2
	require.NoError(t, err)
	require.Equal(t, "ADDED p 2", eventSummary(nextEvent(t, w)))

	_, err = srv.Update(pod("ns", "p", map[string]string{"app": "db"})) // RV 3: leaves the view
	require.NoError(t, err)
	ev := nextEvent(t, w)
	require.Equal(t, "DELETED p 3", eventSummary(ev), "leaving the selector is a delete at the update's RV")
	require.Equal(t, "web", ev.Object.(*corev1.Pod).Labels["app"], "with the last state the watcher could see")

	_, err = srv.Update(pod("ns", "p", map[string]string{"app": "web"})) // RV 4: enters again
	require.NoError(t, err)
	require.Equal(t, "ADDED p 4", eventSummary(nextEvent(t, w)))
	require.NoError(t, srv.Delete(pod("ns", "p", nil)))
	require.Equal(t, "DELETED p 5", eventSummary(nextEvent(t, w)))
}

func TestWatchFieldSelector(t *testing.T) {
	srv := startServer(t, Options{})
	w := openWatch(t, srv.URL()+"/api/v1/pods?watch=true&resourceVersion=0&fieldSelector=spec.nodeName%3Dnode-1", "")
	for i := 0; i < 4; i++ {
		p := pod("ns", fmt.Sprintf("p%d", i), nil)
		p.Spec.NodeName = fmt.Sprintf("node-%d", i%2)
		_, err := srv.Create(p)
		require.NoError(t, err)
	}
	require.Equal(t, "ADDED p1 2", eventSummary(nextEvent(t, w)))
	require.Equal(t, "ADDED p3 4", eventSummary(nextEvent(t, w)))
}

func TestWatchProtobuf(t *testing.T) {
	srv := startServer(t, Options{})
	seedNamed(t, srv, "ns", "a")
	w := openWatch(t, podsURL(srv)+"?watch=true&resourceVersion=0", mediaProtobuf)
	ev := nextEvent(t, w)
	require.Equal(t, "ADDED a 1", eventSummary(ev))
	require.Equal(t, "a", ev.Object.(*corev1.Pod).Labels["name"])
	require.NoError(t, srv.Delete(pod("ns", "a", nil)))
	require.Equal(t, "DELETED a 2", eventSummary(nextEvent(t, w)))
}

func TestWatchPartialObjectMetadata(t *testing.T) {
	srv := startServer(t, Options{})
	seedNamed(t, srv, "ns", "a")
	for _, accept := range []string{
		"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json",
		"application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json",
	} {
		w := openWatch(t, podsURL(srv)+"?watch=true&resourceVersion=0", accept)
		ev := nextEvent(t, w)
		p, ok := ev.Object.(*metav1.PartialObjectMetadata)
		require.True(t, ok, "got %T for %s", ev.Object, accept)
		require.Equal(t, "a", p.Name)
		require.Equal(t, "1", p.ResourceVersion)
		w.Stop()
	}
}

func TestWatchEndsOnClose(t *testing.T) {
	srv, err := NewServer(Options{})
	require.NoError(t, err)
	w := openWatch(t, srv.URL()+"/api/v1/pods?watch=true", "")
	srv.Close()
	requireClosed(t, w)
}

func TestWatchFromFutureResourceVersionSkipsUpToIt(t *testing.T) {
	srv := startServer(t, Options{})
	// As on the real watch cache, a watch from an RV the server has not
	// reached is accepted and sees only events after that RV.
	w := openWatch(t, podsURL(srv)+"?watch=true&resourceVersion=2", "")
	seedNamed(t, srv, "ns", "a", "b", "c")
	require.Equal(t, "ADDED c 3", eventSummary(nextEvent(t, w)))
}

func TestWatchOfClusterScopedResource(t *testing.T) {
	srv := startServer(t, Options{})
	w := openWatch(t, srv.URL()+"/api/v1/nodes?watch=true", "")
	_, err := srv.Create(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
	require.NoError(t, err)
	require.Equal(t, "ADDED n1 1", eventSummary(nextEvent(t, w)))
}

func TestCloseClientConnectionsEndsWatchesButKeepsServing(t *testing.T) {
	srv := startServer(t, Options{})
	w := openWatch(t, podsURL(srv)+"?watch=true", "")
	srv.CloseClientConnections()
	requireClosed(t, w)
	code, _, _ := do(t, http.MethodGet, podsURL(srv), "", "")
	require.Equal(t, http.StatusOK, code)
}

// The real server reads ?watch= with apimachinery's parameter codec: any
// value but "0" or "false" (in any case) asks for a watch.
func TestWatchParameterReadLikeTheRealServer(t *testing.T) {
	srv := startServer(t, Options{})
	seedNamed(t, srv, "ns", "a")
	for value, watches := range map[string]bool{
		"true": true, "1": true, "True": true, "yes": true, "": true,
		"false": false, "0": false, "FALSE": false,
	} {
		t.Run("watch="+value, func(t *testing.T) {
			resp, err := http.Get(podsURL(srv) + "?resourceVersion=0&watch=" + value)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			var first map[string]any
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&first))
			_, isEvent := first["type"]
			require.Equal(t, watches, isEvent, "first value: %v", first)
		})
	}
}

// Close waits until net/http has closed every client connection, not only
// until the handlers have returned: a leak check right after Close must not
// find a connection still being torn down. Idle keep-alive connections have
// no handler to wait for; with twenty of them, and as many watches, some
// would still be open if Close did not wait.
func TestCloseWaitsForEveryConnection(t *testing.T) {
	srv, err := NewServer(Options{})
	require.NoError(t, err)
	for range 20 {
		tr := &http.Transport{}
		t.Cleanup(tr.CloseIdleConnections)
		resp, err := (&http.Client{Transport: tr}).Get(podsURL(srv))
		require.NoError(t, err)
		_, err = io.Copy(io.Discard, resp.Body)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close()) // the connection goes back to the pool, idle
		openWatch(t, podsURL(srv)+"?watch=true", "")
	}
	srv.Close()
	srv.conns.mu.Lock()
	defer srv.conns.mu.Unlock()
	require.Empty(t, srv.conns.conns, "connections still open after Close")
}

// A watch request the server has received but not yet answered (here held
// by a latency fault, as it can be by the scheduler) belongs to the
// generation DropWatches ends: a caller cannot tell such a watch from an
// open one, so a drop must not let it stream on. The watch still gets its
// 200, then ends at once with no events, as a dropped open watch does.
func TestDropWatchesEndsAWatchNotYetAnswered(t *testing.T) {
	srv := startServer(t, Options{})
	seedNamed(t, srv, "ns", "a")
	// The latency only opens the window; the assertion does not depend on
	// it: a drop that came after the watch was answered ends it too.
	srv.Faults().SetLatency("watch", "pods", time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, podsURL(srv)+"?watch=true&resourceVersion=1", nil)
	require.NoError(t, err)
	type answer struct {
		code int
		body []byte
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		answered <- answer{code: resp.StatusCode, body: body, err: err}
	}()
	waitForGoroutineIn(t, "fakeapi.(*Faults).before")
	srv.DropWatches()
	select {
	case a := <-answered:
		require.NoError(t, a.err)
		require.Equal(t, http.StatusOK, a.code)
		require.Empty(t, a.body, "a dropped watch sends nothing")
	case <-time.After(10 * time.Second):
		t.Fatal("a watch received before DropWatches still streams 10s after it")
	}
}
