package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/seed31a95821/informer/rest"
)

// apiClient is the test's own hands on a server: it creates, changes and
// deletes objects, and reads the truth that caches are compared with. It is
// deliberately not the code under test: plain net/http and encoding/json on
// apimachinery's types, the same requests kubectl sends, so the same code
// writes to fakeapi and to kube-apiserver. It goes to the server directly,
// never through a scenario's proxy, so that writes keep working while the
// informer's network is broken.
//
// It is safe for concurrent use.
type apiClient struct {
	base  string // scheme://host:port
	token string
	http  *http.Client
}

// clientTimeout bounds one request; both servers are local.
const clientTimeout = 30 * time.Second

// newAPIClient builds a client from the same rest.Config the informers use,
// so it trusts the same CA and sends the same token.
func newAPIClient(t testing.TB, cfg rest.Config) *apiClient {
	t.Helper()
	hc, err := rest.NewHTTPClient(cfg)
	if err != nil {
		t.Fatalf("apiClient: %v", err)
	}
	// Its idle connections would outlive the test and trip goleak.
	t.Cleanup(hc.CloseIdleConnections)
	return &apiClient{base: strings.TrimRight(cfg.Host, "/"), token: cfg.BearerToken, http: hc}
}

// rawResponse is a whole non-streaming answer.
type rawResponse struct {
	Code        int
	ContentType string
	Header      http.Header
	Body        []byte
	Took        time.Duration
}

// status decodes the body as a metav1.Status, as every error answer is.
func (r rawResponse) status() (metav1.Status, bool) {
	var st metav1.Status
	if json.Unmarshal(r.Body, &st) != nil || st.Kind != "Status" {
		return st, false
	}
	return st, true
}

// err turns a non-2xx answer into the *apierrors.StatusError the server
// meant, so that tests can use apierrors.IsConflict and friends.
func (r rawResponse) err() error {
	if r.Code >= 200 && r.Code < 300 {
		return nil
	}
	if st, ok := r.status(); ok {
		return &apierrors.StatusError{ErrStatus: st}
	}
	return apierrors.NewGenericServerResponse(r.Code, "", schema.GroupResource{}, "", string(r.Body), 0, false)
}

// raw sends one request and reads the whole answer. header may be nil.
func (c *apiClient) raw(method, pathAndQuery string, body []byte, header http.Header) (rawResponse, error) {
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	resp, err := c.send(ctx, method, pathAndQuery, body, header)
	if err != nil {
		return rawResponse{}, err
	}
	defer resp.Body.Close()
	start := time.Now()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return rawResponse{}, fmt.Errorf("%s %s: reading body: %w", method, pathAndQuery, err)
	}
	return rawResponse{Code: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Header: resp.Header, Body: data,
		Took: time.Since(start)}, nil
}

// send starts a request; the caller reads and closes the body. It is the
// form for watches, which stream.
func (c *apiClient) send(ctx context.Context, method, pathAndQuery string, body []byte, header http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+pathAndQuery, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	if body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" && req.Header.Get("Authorization") == "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, pathAndQuery, err)
	}
	return resp, nil
}

// collectionPath is where objects of obj's type live, in obj's namespace.
func collectionPath(obj runtime.Object) (string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", err
	}
	ns := m.GetNamespace()
	switch obj.(type) {
	case *corev1.Namespace:
		return "/api/v1/namespaces", nil
	case *corev1.Pod:
		return "/api/v1/namespaces/" + ns + "/pods", nil
	case *corev1.Service:
		return "/api/v1/namespaces/" + ns + "/services", nil
	case *corev1.ConfigMap:
		return "/api/v1/namespaces/" + ns + "/configmaps", nil
	case *corev1.Secret:
		return "/api/v1/namespaces/" + ns + "/secrets", nil
	case *appsv1.Deployment:
		return "/apis/apps/v1/namespaces/" + ns + "/deployments", nil
	}
	return "", fmt.Errorf("apiClient: no path known for %T", obj)
}

// write sends obj with method to path and decodes the answer into a new
// object of obj's type.
func write[T runtime.Object](c *apiClient, method, path string, obj T) (T, error) {
	var zero T
	body, err := json.Marshal(obj)
	if err != nil {
		return zero, err
	}
	resp, err := c.raw(method, path, body, nil)
	if err != nil {
		return zero, err
	}
	if err := resp.err(); err != nil {
		return zero, err
	}
	out := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(T)
	if err := json.Unmarshal(resp.Body, out); err != nil {
		return zero, fmt.Errorf("%s %s: decoding %T: %w", method, path, out, err)
	}
	return out, nil
}

// create POSTs obj and returns the stored object, with its resourceVersion.
func create[T runtime.Object](t testing.TB, c *apiClient, obj T) T {
	t.Helper()
	path, err := collectionPath(obj)
	if err == nil {
		var out T
		if out, err = write(c, http.MethodPost, path, obj); err == nil {
			return out
		}
	}
	t.Fatalf("create %T: %v", obj, err)
	return obj
}

// update PUTs obj, which must carry the resourceVersion it was read at.
func update[T runtime.Object](t testing.TB, c *apiClient, obj T) T {
	t.Helper()
	path, err := collectionPath(obj)
	if err == nil {
		var out T
		m, _ := meta.Accessor(obj)
		if out, err = write(c, http.MethodPut, path+"/"+m.GetName(), obj); err == nil {
			return out
		}
	}
	t.Fatalf("update %T: %v", obj, err)
	return obj
}

// get reads the current state of obj (by type, namespace and name).
func get[T runtime.Object](t testing.TB, c *apiClient, obj T) T {
	t.Helper()
	path, err := collectionPath(obj)
	if err != nil {
		t.Fatalf("get %T: %v", obj, err)
	}
	m, _ := meta.Accessor(obj)
	resp, err := c.raw(http.MethodGet, path+"/"+m.GetName(), nil, nil)
	if err == nil {
		err = resp.err()
	}
	out := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(T)
	if err == nil {
		err = json.Unmarshal(resp.Body, out)
	}
	if err != nil {
		t.Fatalf("get %T %s: %v", obj, m.GetName(), err)
	}
	return out
}

// remove DELETEs obj with a zero grace period: the pods here are never
// scheduled, and the real server deletes those at once anyway; zero makes
// that explicit.
func remove(t testing.TB, c *apiClient, obj runtime.Object) {
	t.Helper()
	path, err := collectionPath(obj)
	if err != nil {
		t.Fatalf("delete %T: %v", obj, err)
	}
	m, _ := meta.Accessor(obj)
	resp, err := c.raw(http.MethodDelete, path+"/"+m.GetName()+"?gracePeriodSeconds=0", nil, nil)
	if err == nil {
		err = resp.err()
	}
	if err != nil {
		t.Fatalf("delete %T %s: %v", obj, m.GetName(), err)
	}
}

// listState reads a collection (with an optional label selector) and returns
// what a cache of it must converge to: key -> resourceVersion. The list is
// a consistent read, so it is the server's current truth.
func listState(t testing.TB, c *apiClient, collection, labelSelector string) map[string]string {
	t.Helper()
	q := ""
	if labelSelector != "" {
		q = "?labelSelector=" + url.QueryEscape(labelSelector)
	}
	resp, err := c.raw(http.MethodGet, collection+q, nil, nil)
	if err == nil {
		err = resp.err()
	}
	var list metav1.PartialObjectMetadataList // every list decodes into names and versions
	if err == nil {
		err = json.Unmarshal(resp.Body, &list)
	}
	if err != nil {
		t.Fatalf("list %s: %v", collection, err)
	}
	state := make(map[string]string, len(list.Items))
	for _, item := range list.Items {
		state[item.Namespace+"/"+item.Name] = item.ResourceVersion
	}
	return state
}
