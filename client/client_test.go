package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/client"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/rest"
)

func serve(t *testing.T, opts fakeapi.Options) *fakeapi.Server {
	t.Helper()
	srv, err := fakeapi.NewServer(opts)
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	return srv
}

func pods(t *testing.T, cfg rest.Config) *client.Resource[*corev1.Pod] {
	t.Helper()
	c, err := client.New(cfg, client.Options{})
	require.NoError(t, err)
	p, err := client.For[*corev1.Pod](c)
	require.NoError(t, err)
	return p
}

// createNamespace creates ns over HTTP (a cluster-scoped create): a real
// server, and fakeapi, refuse writes into a namespace that does not exist.
func createNamespace(t *testing.T, cfg rest.Config, ns string) {
	t.Helper()
	c, err := client.New(cfg, client.Options{})
	require.NoError(t, err)
	namespaces, err := client.For[*corev1.Namespace](c)
	require.NoError(t, err)
	_, err = namespaces.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
}

func newPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "web:1"}}},
	}
}

// Every verb against the fake API server over HTTP, in both encodings.
func TestVerbs(t *testing.T) {
	for _, ct := range []string{rest.ContentTypeJSON, rest.ContentTypeProtobuf} {
		t.Run(ct, func(t *testing.T) {
			srv := serve(t, fakeapi.Options{Token: "s3cret"})
			cfg := rest.Config{Host: srv.URL(), BearerToken: "s3cret", ContentType: ct}
			createNamespace(t, cfg, "shop")
			p := pods(t, cfg)
			ctx := context.Background()

			created, err := p.Create(ctx, newPod("web-1"), metav1.CreateOptions{})
			require.NoError(t, err)
			assert.NotEmpty(t, created.ResourceVersion)
			assert.Equal(t, "Pod", created.Kind)

			_, err = p.Create(ctx, newPod("web-1"), metav1.CreateOptions{})
			assert.True(t, apierrors.IsAlreadyExists(err), "%v", err)

			got, err := p.Get(ctx, "shop", "web-1", metav1.GetOptions{})
			require.NoError(t, err)
			assert.Equal(t, created.UID, got.UID)

			_, err = p.Get(ctx, "shop", "nope", metav1.GetOptions{})
			assert.True(t, apierrors.IsNotFound(err), "%v", err)
			assert.False(t, errors.Is(err, client.ErrUnserved), "a missing object is not a missing resource")

			got.Labels = map[string]string{"tier": "front"}
			updated, err := p.Update(ctx, got, metav1.UpdateOptions{})
			require.NoError(t, err)
			assert.Equal(t, "front", updated.Labels["tier"])

			// got still carries the old resourceVersion: a stale write.
			got.Labels["tier"] = "back"
			_, err = p.Update(ctx, got, metav1.UpdateOptions{})
			assert.True(t, apierrors.IsConflict(err), "%v", err)

			status := updated.DeepCopy()
			status.Status.Phase = corev1.PodRunning
			status.Spec.Containers[0].Image = "ignored:2" // the status subresource keeps the spec
			afterStatus, err := p.UpdateStatus(ctx, status, metav1.UpdateOptions{})
			require.NoError(t, err)
			assert.Equal(t, corev1.PodRunning, afterStatus.Status.Phase)
			assert.Equal(t, "web:1", afterStatus.Spec.Containers[0].Image)

			patched, err := p.Patch(ctx, "shop", "web-1", types.MergePatchType,
				[]byte(`{"metadata":{"annotations":{"checked-by":"test"}}}`), metav1.PatchOptions{}, "")
			require.NoError(t, err)
			assert.Equal(t, "test", patched.Annotations["checked-by"])

			_, err = p.Create(ctx, newPod("web-2"), metav1.CreateOptions{})
			require.NoError(t, err)
			list, rv, err := p.List(ctx, "shop", metav1.ListOptions{})
			require.NoError(t, err)
			assert.Len(t, list, 2)
			assert.NotEmpty(t, rv)

			wrongRV := "1"
			err = p.Delete(ctx, "shop", "web-1", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &wrongRV}})
			assert.True(t, apierrors.IsConflict(err), "precondition: %v", err)
			uid := patched.UID
			require.NoError(t, p.Delete(ctx, "shop", "web-1", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}))
			_, err = p.Get(ctx, "shop", "web-1", metav1.GetOptions{})
			assert.True(t, apierrors.IsNotFound(err))
		})
	}
}

func TestUnauthorized(t *testing.T) {
	srv := serve(t, fakeapi.Options{Token: "s3cret"})
	p := pods(t, rest.Config{Host: srv.URL(), BearerToken: "wrong"})
	_, err := p.Create(context.Background(), newPod("web-1"), metav1.CreateOptions{})
	assert.True(t, apierrors.IsUnauthorized(err), "%v", err)
}

// unregistered is a kind no scheme knows.
type unregistered struct{ corev1.Pod }

func (u *unregistered) DeepCopyObject() runtime.Object { return u }

// Bad input gives a typed error at once, with no request sent.
func TestBadInputNeedsNoServer(t *testing.T) {
	var requests atomic.Int32 // besides discovery's, which For reads
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api" && r.URL.Path != "/apis" {
			requests.Add(1)
		}
	}))
	defer srv.Close()
	c, err := client.New(rest.Config{Host: srv.URL}, client.Options{})
	require.NoError(t, err)

	_, err = client.For[*unregistered](c)
	assert.ErrorIs(t, err, client.ErrUnknownType)
	assert.ErrorIs(t, err, informer.ErrUnknownType)

	p, err := client.For[*corev1.Pod](c)
	require.NoError(t, err)
	ctx := context.Background()
	_, err = p.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	assert.ErrorIs(t, err, client.ErrInvalidObject, "namespaced kind without a namespace")
	_, err = p.Update(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop"}}, metav1.UpdateOptions{})
	assert.ErrorIs(t, err, client.ErrInvalidObject, "no name")
	_, err = p.Patch(ctx, "shop", "x", types.ApplyPatchType, []byte("{}"), metav1.PatchOptions{}, "")
	assert.ErrorIs(t, err, client.ErrInvalidObject, "apply patches are not offered")
	assert.ErrorIs(t, p.Delete(ctx, "shop", "", metav1.DeleteOptions{}), client.ErrInvalidObject)
	assert.Zero(t, requests.Load())
}

// A resource the server does not serve is told apart from a missing object,
// and RetryOnConflict does not retry it.
func TestUnservedResource(t *testing.T) {
	srv := serve(t, fakeapi.Options{})
	c, err := client.New(rest.Config{Host: srv.URL()}, client.Options{
		Resources: []informer.Resource{{Kind: corev1.SchemeGroupVersion.WithKind("Pod"), Plural: "widgets"}},
	})
	require.NoError(t, err)
	p, err := client.For[*corev1.Pod](c)
	require.NoError(t, err)
	calls := 0
	err = client.RetryOnConflict(context.Background(), client.DefaultRetry, func() error {
		calls++
		_, err := p.Create(context.Background(), newPod("web-1"), metav1.CreateOptions{})
		return err
	})
	var unserved *client.UnservedError
	require.ErrorAs(t, err, &unserved)
	assert.Equal(t, "widgets", unserved.Resource.Resource)
	assert.True(t, apierrors.IsNotFound(err))
	assert.Equal(t, 1, calls)
}

// A proxy's HTML page is not a Status: the error still carries the HTTP code.
func TestNonStatusErrorBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, "<html>upstream down</html>")
	}))
	defer srv.Close()
	p := pods(t, rest.Config{Host: srv.URL})
	_, err := p.Create(context.Background(), newPod("web-1"), metav1.CreateOptions{})
	var status apierrors.APIStatus
	require.ErrorAs(t, err, &status)
	assert.Equal(t, int32(http.StatusBadGateway), status.Status().Code)
	assert.Contains(t, err.Error(), "upstream down")
}

// A 2xx body is bounded and must be the expected kind.
func TestHostileSuccessBodies(t *testing.T) {
	tests := []struct {
		name, contentType, body string
	}{
		{"too large", "application/json", `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"` + strings.Repeat("x", 4096) + `"}}`},
		{"not JSON", "application/json", `{{{`},
		{"another kind", "application/json", `{"kind":"Service","apiVersion":"v1","metadata":{"name":"a"}}`},
		{"unknown media type", "text/plain", `hello`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.contentType)
				io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			p := pods(t, rest.Config{Host: srv.URL, MaxObjectBytes: 1024})
			_, err := p.Get(context.Background(), "shop", "a", metav1.GetOptions{})
			assert.ErrorIs(t, err, client.ErrMalformedResponse)
		})
	}
}

// Strategic merge and JSON patch send their own Content-Type and the body as
// given. (fakeapi answers merge patch only; the real server test covers
// the other two end to end.)
func TestPatchTypesOnTheWire(t *testing.T) {
	for _, pt := range []types.PatchType{types.MergePatchType, types.StrategicMergePatchType, types.JSONPatchType} {
		t.Run(string(pt), func(t *testing.T) {
			var gotType, gotBody, gotPath, gotMethod string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				gotType, gotBody, gotPath, gotMethod = r.Header.Get("Content-Type"), string(b), r.URL.Path, r.Method
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"shop"}}`)
			}))
			defer srv.Close()
			body := `{"metadata":{"labels":{"a":"b"}}}`
			if pt == types.JSONPatchType {
				body = `[{"op":"add","path":"/metadata/labels/a","value":"b"}]`
			}
			p := pods(t, rest.Config{Host: srv.URL})
			_, err := p.Patch(context.Background(), "shop", "a", pt, []byte(body), metav1.PatchOptions{FieldManager: "me"}, "status")
			require.NoError(t, err)
			assert.Equal(t, string(pt), gotType)
			assert.Equal(t, body, gotBody)
			assert.Equal(t, http.MethodPatch, gotMethod)
			assert.Equal(t, "/api/v1/namespaces/shop/pods/a/status", gotPath)
		})
	}
}

// The token goes to the configured origin only, never along a redirect to
// another host: rest.NewHTTPClient, which the client sends through, does
// not follow redirects at all (the API never needs one), so the other
// host is not even asked, and the caller gets the redirect as an error.
func TestTokenStaysWithItsOrigin(t *testing.T) {
	var reached atomic.Int64
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		w.WriteHeader(http.StatusNotFound)
	}))
	defer elsewhere.Close()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			t.Errorf("origin got %q", r.Header.Get("Authorization"))
		}
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusFound)
	}))
	defer origin.Close()
	p := pods(t, rest.Config{Host: origin.URL, BearerToken: "s3cret"})
	_, err := p.Get(context.Background(), "shop", "a", metav1.GetOptions{})
	assert.Error(t, err, "a redirect is not an answer")
	assert.Zero(t, reached.Load(), "requests that followed the redirect to another host")
}

func TestRetryOnConflict(t *testing.T) {
	conflict := apierrors.NewConflict(corev1.Resource("pods"), "a", errors.New("changed"))
	tests := []struct {
		name      string
		errs      []error
		wantCalls int
		wantErr   error
	}{
		{"success at once", []error{nil}, 1, nil},
		{"conflicts then success", []error{conflict, conflict, nil}, 3, nil},
		{"other errors are not retried", []error{apierrors.NewNotFound(corev1.Resource("pods"), "a")}, 1, nil},
		{"gives up after the steps", []error{conflict, conflict, conflict, conflict, conflict, conflict}, 5, conflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			backoff := wait.Backoff{Steps: 5, Duration: 0}
			err := client.RetryOnConflict(context.Background(), backoff, func() error {
				err := tt.errs[calls]
				calls++
				return err
			})
			assert.Equal(t, tt.wantCalls, calls)
			if tt.wantErr != nil {
				assert.True(t, apierrors.IsConflict(err), "%v", err)
			} else if calls == len(tt.errs) && tt.errs[calls-1] == nil {
				assert.NoError(t, err)
			} else {
				assert.True(t, apierrors.IsNotFound(err))
			}
		})
	}
	assert.Equal(t, wait.Backoff{Steps: 5, Duration: 10_000_000, Factor: 1, Jitter: 0.1}, client.DefaultRetry, "client-go's DefaultRetry")
}

// Every request waits on the client-side rate limit, shared through
// Config.RateLimiter: two clients (or a client and a factory) built from one
// Config draw from one budget. A negative QPS turns the limit off.
func TestRateLimit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
	}))
	defer srv.Close()
	// Four requests, then none for a long while: each client's For reads
	// discovery (one request, /api, which answers 404), then one Get each.
	cfg := rest.Config{Host: srv.URL, QPS: 0.001, Burst: 4}
	cfg.RateLimiter = rest.NewRateLimiter(cfg)
	first, second := pods(t, cfg), pods(t, cfg)
	ctx := context.Background()
	_, err := first.Get(ctx, "shop", "a", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "%v", err)
	_, err = second.Get(ctx, "shop", "a", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "%v", err)

	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = first.Get(short, "shop", "a", metav1.GetOptions{})
	require.ErrorContains(t, err, "rate limit", "the shared budget is spent")

	unlimited := pods(t, rest.Config{Host: srv.URL, QPS: -1})
	for range 5 {
		_, err = unlimited.Get(ctx, "shop", "a", metav1.GetOptions{})
		require.True(t, apierrors.IsNotFound(err), "%v", err)
	}
}

// A client built on the caller's own *http.Client (Options.HTTPClient)
// refuses redirects too: a followed 307 would replay a Create's body to
// another host and blame that host's answer on this server.
func TestCallersClientFollowsNoRedirect(t *testing.T) {
	var reached atomic.Int64
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		w.WriteHeader(http.StatusNotFound)
	}))
	defer elsewhere.Close()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer origin.Close()
	c, err := client.New(rest.Config{Host: origin.URL, BearerToken: "s3cret", HTTPClient: &http.Client{}}, client.Options{})
	require.NoError(t, err)
	defer c.CloseIdleConnections()
	p, err := client.For[*corev1.Pod](c)
	require.NoError(t, err)
	_, err = p.Create(context.Background(), newPod("a"), metav1.CreateOptions{})
	require.Error(t, err)
	assert.Zero(t, reached.Load(), "requests that followed the redirect to another host")
}
