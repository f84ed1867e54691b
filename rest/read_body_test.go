package rest

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestBodyRoom(t *testing.T) {
	const noLimit = 1 << 40
	tests := []struct {
		name           string
		have           int
		claimed, limit int64
		want           int
	}{
		{"unknown length: a small first buffer", 0, -1, noLimit, firstUnknownBuffer},
		{"unknown length: doubles", 1 << 20, -1, noLimit, 1 << 20},
		{"small claim: exactly the claim and the end", 0, 100, noLimit, 101},
		{"huge claim: only trustedClaim before any byte arrives", 0, 1 << 30, noLimit, trustedClaim},
		{"huge claim: doubles as bytes arrive", 4 << 20, 1 << 30, noLimit, 4 << 20},
		{"near the claim: never past it", 900 << 20, 1 << 30, noLimit, 124<<20 + 1},
		{"claim reached: room for the end only", 100, 100, noLimit, 1},
		{"claim exceeded: keeps growing, the limit stops it", 1000, 100, noLimit, firstUnknownBuffer},
		{"unknown length near the limit: never past it", 40 << 20, -1, 64<<20 + 5, 24<<20 + 6},
		{"unknown length, doubling reaches the limit: to limit+1 at once", 32 << 20, -1, 64 << 20, 32<<20 + 1},
		{"limit below the first buffer", 0, -1, 10, 11},
		{"limit below the trusted claim", 0, 1 << 30, 1000, 1001},
		{"claim exceeded near the limit", 1000, 100, 1500, 501},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, bodyRoom(tt.have, tt.claimed, tt.limit))
		})
	}
}

// A body of unknown length (chunked, or gzip-inflated by net/http) is read
// into a buffer that never grows past the limit and the one byte that
// shows the end: a body of exactly the limit fits, one byte more is
// refused, and refusing allocates less than three times the limit (the
// doublings on the way, then the last buffer). The buffer used to double
// past the limit: up to twice the limit in one buffer, four times in all.
func TestReadBodyBufferNeverPassesTheLimit(t *testing.T) {
	for _, limit := range []int64{100_000, 1 << 20, 3<<20 + 7} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			body := strings.Repeat("x", int(limit))
			got, err := ReadBody(&http.Response{ContentLength: -1, Body: io.NopCloser(strings.NewReader(body))}, limit)
			require.NoError(t, err)
			assert.Len(t, got, int(limit))
			assert.LessOrEqual(t, int64(cap(got)), limit+1, "the buffer grew past the limit")

			tooLong := &http.Response{ContentLength: -1, Body: io.NopCloser(strings.NewReader(body + "y"))}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = ReadBody(tooLong, limit)
			runtime.ReadMemStats(&after)
			require.ErrorIs(t, err, ErrObjectTooLarge)
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(3*limit), "allocated to refuse a body one byte too long")
		})
	}
}

// A 19-byte body that claims a gigabyte costs what it sends, not what it
// claims.
func TestLyingContentLengthIsNotAllocated(t *testing.T) {
	body := `{"kind":"PodList"}`
	var got []byte
	var err error
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err = ReadBody(&http.Response{ContentLength: 1 << 30, Body: io.NopCloser(strings.NewReader(body))}, 2<<30)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	assert.Equal(t, body, string(got))
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(2*trustedClaim), "allocated for the claim")
}

func TestRedactor(t *testing.T) {
	auth, err := newAuthenticator(Config{Host: "https://example.test", BearerToken: "s3cr3t-token"})
	require.NoError(t, err)
	red := redactor{auth: auth}
	assert.Equal(t, "bad token [redacted] twice [redacted]", red.redact("bad token s3cr3t-token twice s3cr3t-token"))
	assert.Equal(t, "nothing here", red.redact("nothing here"))

	cause := errors.New("echo s3cr3t-token")
	e := red.err(fmt.Errorf("wrapped: %w", cause))
	assert.Equal(t, "wrapped: echo [redacted]", e.Error())
	assert.ErrorIs(t, e, cause, "still unwraps")
	plain := errors.New("fine")
	assert.Same(t, plain, red.err(plain))

	st := &metav1.Status{Message: "s3cr3t-token", Details: &metav1.StatusDetails{
		Name: "s3cr3t-token", Causes: []metav1.StatusCause{{Message: "x s3cr3t-token", Field: "s3cr3t-token"}}}}
	red.status(st)
	assert.NotContains(t, fmt.Sprintf("%+v", st), "s3cr3t-token")
	assert.Equal(t, "s3cr3t-token", auth.tokens.static, "the token itself is untouched")
	assert.Equal(t, "x", redactor{}.redact("x"), "the zero value redacts nothing")
}

func TestURLLayout(t *testing.T) {
	cases := []struct {
		host, ns string
		gvr      schema.GroupVersionResource
		want     string
	}{
		{"https://h:6443", "", corev1.SchemeGroupVersion.WithResource("pods"), "https://h:6443/api/v1/pods"},
		{"https://h:6443", "kube-system", corev1.SchemeGroupVersion.WithResource("pods"), "https://h:6443/api/v1/namespaces/kube-system/pods"},
		{"https://h", "", appsv1.SchemeGroupVersion.WithResource("deployments"), "https://h/apis/apps/v1/deployments"},
		{"https://h", "ns", appsv1.SchemeGroupVersion.WithResource("deployments"), "https://h/apis/apps/v1/namespaces/ns/deployments"},
		{"https://proxy/k8s/clusters/c1/", "", corev1.SchemeGroupVersion.WithResource("nodes"), "https://proxy/k8s/clusters/c1/api/v1/nodes"},
	}
	for _, tc := range cases {
		u := resourceURL(tc.host, tc.gvr, tc.ns)
		assert.Equal(t, tc.want, u.String())
		assert.True(t, strings.HasPrefix(u.Path, "/"), "the request line needs an absolute path: %q", u.Path)
	}
}
