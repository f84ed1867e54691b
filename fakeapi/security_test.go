package fakeapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestListensOnLoopbackByDefault(t *testing.T) {
	srv := startServer(t, Options{})
	require.True(t, strings.HasPrefix(srv.URL(), "http://127.0.0.1:"), srv.URL())
}

func TestBearerToken(t *testing.T) {
	srv := startServer(t, Options{Token: "t0ken"})
	url := srv.URL() + "/api/v1/pods"
	for _, header := range []string{"", "Bearer wrong", "Basic dDB rZW4=", "Bearer"} {
		code, body, _ := do(t, http.MethodGet, url, "", "", "Authorization", header)
		require.Equal(t, http.StatusUnauthorized, code, "header %q", header)
		st := decodeStatus(t, body)
		require.Equal(t, metav1.StatusReasonUnauthorized, st.Reason)
	}
	code, _, _ := do(t, http.MethodGet, url, "", "", "Authorization", "Bearer t0ken")
	require.Equal(t, http.StatusOK, code)
}

func TestBodySizeLimit(t *testing.T) {
	srv := startServer(t, Options{MaxBodyBytes: 1024})
	big := `{"metadata":{"name":"a","annotations":{"x":"` + strings.Repeat("y", 2048) + `"}}}`
	code, body, _ := do(t, http.MethodPost, podsURL(srv), mediaJSON, big)
	require.Equal(t, http.StatusRequestEntityTooLarge, code)
	st := decodeStatus(t, body)
	require.Equal(t, metav1.StatusReasonRequestEntityTooLarge, st.Reason)
	require.Equal(t, "Request entity too large: limit is 1024", st.Message)
}

// hostileRequests are inputs a careless or malicious client might send.
var hostileRequests = []struct{ method, path, contentType, body string }{
	{"POST", "/api/v1/namespaces/ns/pods", mediaJSON, `{"metadata":{"name":"a"},"spec":{"containers":[{"resources":{"limits":{"cpu":"1e999999999"}}}]}}`},
	{"POST", "/api/v1/namespaces/ns/pods", mediaJSON, strings.Repeat("[", 100000)},
	{"POST", "/api/v1/namespaces/ns/pods", mediaJSON, `{"metadata":{"name":"` + strings.Repeat("a", 5000) + `"}}`},
	{"POST", "/api/v1/namespaces/ns/pods", mediaJSON, "\x00\xff\xfe"},
	{"POST", "/api/v1/namespaces/ns/pods", mediaProtobuf, "k8s\x00\x0a\xff\xff\xff\xff\x0f"},
	{"POST", "/api/v1/namespaces/ns/pods", mediaProtobuf, "garbage"},
	{"POST", "/api/v1/namespaces/ns/pods", mediaYAML, "a: [: b"},
	{"POST", "/api/v1/namespaces/ns/pods", "application/json; charset=\"unterminated", "{}"},
	{"POST", "/api/v1/namespaces/ns/pods", mediaJSON, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"a"}}`},
	{"POST", "/api/v1/namespaces/ns/pods", mediaJSON, `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"../../etc"}}`},
	{"PUT", "/api/v1/namespaces/ns/pods/a/status", mediaJSON, `{"metadata":{"name":"a"}}`},
	{"PATCH", "/api/v1/namespaces/ns/pods/a", mediaMerge, `{"metadata":{"name":"b"}}`},
	{"PATCH", "/api/v1/namespaces/ns/pods/a", mediaMerge, `{"kind":"Service"}`},
	{"PATCH", "/api/v1/namespaces/ns/pods/a", mediaMerge, `{"spec":{"containers":"nope"}}`},
	{"DELETE", "/api/v1/namespaces/ns/pods/a", mediaJSON, `{"preconditions":{"uid":12}}`},
	{"GET", "/api/v1/pods?limit=-5&labelSelector=" + strings.Repeat("a", 300) + "=b", "", ""},
	{"GET", "/api/v1/pods?continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTUsInN0YXJ0IjoieCJ9", "", ""},
	{"GET", "/api/v1/pods?resourceVersion=99999999999999999999999", "", ""},
	{"GET", "/api/v1/pods?timeoutSeconds=-1&watch=1&resourceVersion=-1", "", ""},
	{"GET", "/api/v1/namespaces//pods", "", ""},
	{"GET", "/apis/apps", "", ""},
	{"GET", "/api/v1/namespaces/ns/pods/a/status/extra", "", ""},
	{"TRACE", "/api/v1/pods", "", ""},
	{"GET", "/fakeapi/v1/resourceversion", "", ""},
	{"POST", "/fakeapi/v1/faults/fail", mediaJSON, `{"count":"many"}`},
}

func TestHostileInputGetsCleanStatus(t *testing.T) {
	srv := startServer(t, Options{MaxBodyBytes: 64 << 10})
	_, err := srv.Create(pod("ns", "a", nil))
	require.NoError(t, err)
	for _, h := range hostileRequests {
		t.Run(h.method+" "+h.path, func(t *testing.T) {
			code, body, header := do(t, h.method, srv.URL()+h.path, h.contentType, h.body)
			require.NotEqual(t, http.StatusInternalServerError, code, "%s", body)
			if code >= 400 {
				require.Equal(t, mediaJSON, header.Get("Content-Type"))
				decodeStatus(t, body)
			}
		})
	}
	code, _, _ := do(t, http.MethodGet, srv.URL()+"/api/v1/namespaces/ns/pods/a", "", "")
	require.Equal(t, http.StatusOK, code, "the server still works")
}

// FuzzRequests throws arbitrary requests at the handler: every answer must
// be a response (no panic), and every error a decodable Status.
func FuzzRequests(f *testing.F) {
	for _, h := range hostileRequests {
		f.Add(h.method, h.path, h.contentType, h.body)
	}
	f.Add("POST", "/api/v1/namespaces/ns/pods", mediaJSON, podJSON)
	f.Add("GET", "/api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true", "", "")
	srv, err := NewServer(Options{MaxBodyBytes: 64 << 10})
	require.NoError(f, err)
	f.Cleanup(srv.Close)
	f.Fuzz(func(t *testing.T, method, path, contentType, body string) {
		req := httptest.NewRequest(http.MethodGet, "/", strings.NewReader(body))
		req.Method = method
		req.URL.RawQuery = ""
		if i := strings.IndexByte(path, '?'); i >= 0 {
			path, req.URL.RawQuery = path[:i], path[i+1:]
		}
		req.URL.Path = path
		req.Header.Set("Content-Type", contentType)
		ctx, cancel := context.WithTimeout(req.Context(), 20*time.Millisecond)
		defer cancel()
		rec := httptest.NewRecorder()
		done := make(chan struct{})
		go func() {
			defer close(done)
			// A cut-frame fault aborts its response the net/http way;
			// the real server recovers that panic, so do we here.
			defer func() {
				if v := recover(); v != nil && v != http.ErrAbortHandler {
					panic(v)
				}
			}()
			srv.serveHTTP(rec, req.WithContext(ctx))
		}()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			panic(fmt.Sprintf("request hung: %q %q\n%s", method, path, buf[:n]))
		}
		if rec.Code >= 400 {
			var st metav1.Status
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &st), "%d %q", rec.Code, rec.Body.String())
			require.Equal(t, "Status", st.Kind)
		}
	})
}

// An empty path segment names nothing: "/api/v1/namespaces//pods" is not
// the list of every namespace's pods, and no write may land there.
func TestEmptyPathSegmentIsNotFound(t *testing.T) {
	srv := startServer(t, Options{})
	_, err := srv.Create(pod("ns", "a", nil))
	require.NoError(t, err)
	for _, h := range []struct{ method, path, body string }{
		{"GET", "/api/v1/namespaces//pods", ""},
		{"GET", "/api/v1/namespaces/ns//a", ""},
		{"POST", "/api/v1/namespaces//pods", podJSON},
	} {
		code, body, _ := do(t, h.method, srv.URL()+h.path, mediaJSON, h.body)
		require.Equal(t, http.StatusNotFound, code, "%s %s: %s", h.method, h.path, body)
	}
}
