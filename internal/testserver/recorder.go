package testserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ContentTypeJSON is the media type of the bodies this package serves
// (package rest's ContentTypeJSON, which this package cannot import).
const ContentTypeJSON = "application/json"

// Request is what a Recorder saw of one request.
type Request struct {
	Path   string
	Query  map[string][]string
	Header http.Header
}

// Recorder is an httptest server whose handler each test supplies, and
// which records every request before handing it on. It is safe for
// concurrent use.
type Recorder struct {
	*httptest.Server
	mu       sync.Mutex // guards requests
	requests []Request
}

// New starts a Recorder around handler and closes it when the test ends.
func New(t testing.TB, handler http.HandlerFunc) *Recorder {
	t.Helper()
	rec := &Recorder{}
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.requests = append(rec.requests, Request{Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone()})
		rec.mu.Unlock()
		handler(w, r)
	}))
	t.Cleanup(rec.Close)
	return rec
}

// Last returns the last request seen, failing the test if there was none.
func (rec *Recorder) Last(t testing.TB) Request {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.requests) == 0 {
		t.Fatal("testserver: no request was recorded")
	}
	return rec.requests[len(rec.requests)-1]
}

// Requests returns a copy of the requests seen so far, in order.
func (rec *Recorder) Requests() []Request {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]Request(nil), rec.requests...)
}

// ServeBody answers with one complete body.
func ServeBody(contentType string, code int, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(code)
		_, _ = w.Write(body)
	}
}

// PodListJSON is a small pod list (one pod, ns1/pod-0), as a server sends
// it in JSON.
func PodListJSON(t testing.TB) []byte {
	t.Helper()
	b, err := json.Marshal(&corev1.PodList{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"},
		ListMeta: metav1.ListMeta{ResourceVersion: "1"},
		Items:    []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "pod-0", ResourceVersion: "10"}}},
	})
	must(t, err)
	return b
}
