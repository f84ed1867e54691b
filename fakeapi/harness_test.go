package fakeapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/fakeapi/internal/patch"
)

// The patch media types, short for the tests that send patches.
const (
	mediaMerge          = patch.MediaMerge
	mediaStrategicMerge = patch.MediaStrategicMerge
	mediaJSONPatch      = patch.MediaJSONPatch
	mediaApply          = patch.MediaApply
	maxJSONDepth        = patch.MaxDepth
)

// The test harness talks to the server the way a client does, over HTTP,
// and decodes with apimachinery's own serializers and stream decoder, so
// that every test also checks the wire format.

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// startServer starts a server that is closed when the test ends.
func startServer(t testing.TB, opts Options) *Server {
	t.Helper()
	srv, err := NewServer(opts)
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	return srv
}

// createNamespace creates a namespace through the Go API: HTTP writes into
// a namespace need it to exist, as on a real server.
func createNamespace(t testing.TB, srv *Server, name string) {
	t.Helper()
	_, err := srv.Create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	require.NoError(t, err)
}

// testCodecs decodes what the server sends.
var testCodecs = serializer.NewCodecFactory(apiresource.NewScheme())

// do sends a request and returns the status code and body.
func do(t testing.TB, method, url, contentType, body string, header ...string) (int, []byte, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, data, resp.Header
}

// decodeJSON decodes a response body with the codecs (typed objects).
func decodeJSON(t testing.TB, data []byte) runtime.Object {
	t.Helper()
	obj, _, err := testCodecs.UniversalDeserializer().Decode(data, nil, nil)
	require.NoError(t, err, "body: %s", data)
	return obj
}

// decodeStatus decodes a Status body.
func decodeStatus(t testing.TB, data []byte) *metav1.Status {
	t.Helper()
	var st metav1.Status
	require.NoError(t, json.Unmarshal(data, &st), "body: %s", data)
	require.Equal(t, "Status", st.Kind, "body: %s", data)
	return &st
}

// wireDecoder adapts apimachinery's streaming decoder to watch.Decoder:
// frames are metav1.WatchEvents whose objects are decoded separately.
type wireDecoder struct {
	stream   streaming.Decoder
	embedded runtime.Decoder
}

func (d *wireDecoder) Decode() (watch.EventType, runtime.Object, error) {
	var ev metav1.WatchEvent
	got, _, err := d.stream.Decode(nil, &ev)
	if err != nil {
		return "", nil, err
	}
	if got != &ev {
		return "", nil, io.ErrUnexpectedEOF
	}
	obj, err := runtime.Decode(d.embedded, ev.Object.Raw)
	if err != nil {
		return "", nil, err
	}
	return watch.EventType(ev.Type), obj, nil
}

func (d *wireDecoder) Close() { _ = d.stream.Close() }

// openWatch starts a watch request and returns apimachinery's
// StreamWatcher over the response.
func openWatch(t testing.TB, url, accept string, header ...string) watch.Interface {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		t.Fatalf("watch %s: %d %s", url, resp.StatusCode, data)
	}
	mediaType := resp.Header.Get("Content-Type")
	if i := strings.IndexByte(mediaType, ';'); i >= 0 {
		mediaType = mediaType[:i]
	}
	info, ok := runtime.SerializerInfoForMediaType(testCodecs.SupportedMediaTypes(), mediaType)
	require.True(t, ok, "content type %q", resp.Header.Get("Content-Type"))
	body := &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	dec := &wireDecoder{
		stream:   streaming.NewDecoder(info.StreamSerializer.Framer.NewFrameReader(body), info.StreamSerializer.Serializer),
		embedded: testCodecs.UniversalDeserializer(),
	}
	w := watch.NewStreamWatcher(dec, reporterFunc(func(err error) (string, string) { return "", err.Error() }))
	t.Cleanup(w.Stop)
	return w
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	c.cancel()
	return c.ReadCloser.Close()
}

type reporterFunc func(error) (string, string)

func (f reporterFunc) AsObject(err error) runtime.Object {
	_, msg := f(err)
	return &metav1.Status{Status: metav1.StatusFailure, Message: msg}
}

// nextEvent waits for the next event, failing the test after a deadline.
func nextEvent(t testing.TB, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		require.True(t, ok, "watch closed")
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10s")
	}
	return watch.Event{}
}

// requireClosed waits for the watch to end.
func requireClosed(t testing.TB, w watch.Interface) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			t.Logf("draining %s before close", ev.Type)
		case <-deadline:
			t.Fatal("watch still open after 10s")
		}
	}
}

// eventSummary renders an event as "TYPE name rv" for compact assertions.
func eventSummary(ev watch.Event) string {
	if st, ok := ev.Object.(*metav1.Status); ok {
		return string(ev.Type) + " " + string(st.Reason)
	}
	m, err := meta.Accessor(ev.Object)
	if err != nil {
		return string(ev.Type) + " ?"
	}
	return string(ev.Type) + " " + m.GetName() + " " + m.GetResourceVersion()
}

func jsonBody(t testing.TB, v any) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, json.NewEncoder(&buf).Encode(v))
	return buf.String()
}

// waitForGoroutineIn waits until some goroutine's stack holds fn (e.g.
// "fakeapi.(*watchStream).waitStall"): how a test knows, without sleeping,
// that a handler has reached a blocking point.
func waitForGoroutineIn(t testing.TB, fn string) {
	t.Helper()
	buf := make([]byte, 1<<20)
	require.Eventually(t, func() bool {
		n := goruntime.Stack(buf, true)
		return bytes.Contains(buf[:n], []byte(fn))
	}, 20*time.Second, 5*time.Millisecond, "no goroutine in %s", fn)
}
