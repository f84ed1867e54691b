package wire

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/internal/testserver"
	"github.com/seed31a95821/informer/rest"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
)

// This file builds what a real API server puts on the wire, with
// apimachinery's own serializers and framers, so that the decoders under
// test are checked against the reference encoder rather than against our
// own idea of the format.

// wireEncoder encodes objects and watch frames in one media type the way
// kube-apiserver does: objects through the media type's serializer (for
// protobuf: magic prefix + runtime.Unknown envelope), watch events as a
// metav1.WatchEvent through the stream serializer (for protobuf: raw, no
// envelope) and its framer (for protobuf: 4-byte length prefix).
type wireEncoder struct {
	mediaType     string
	contentType   string // of a watch response
	scheme        *runtime.Scheme
	objectEncoder runtime.Encoder
	streamEncoder runtime.Encoder
	framer        runtime.Framer
}

func newWireEncoder(mediaType string) *wireEncoder {
	s := NewScheme()
	e := &wireEncoder{mediaType: mediaType, scheme: s}
	switch mediaType {
	case rest.ContentTypeJSON:
		js := kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, s, s, kjson.SerializerOptions{})
		e.objectEncoder, e.streamEncoder, e.framer = js, js, kjson.Framer
		e.contentType = rest.ContentTypeJSON
	case rest.ContentTypeProtobuf:
		e.objectEncoder = protobuf.NewSerializer(s, s)
		e.streamEncoder = protobuf.NewRawSerializer(s, s)
		e.framer = protobuf.LengthDelimitedFramer
		e.contentType = rest.ContentTypeProtobuf + ";stream=watch"
	default:
		panic(mediaType)
	}
	return e
}

// object encodes obj as a response body, with its apiVersion/kind set the
// way the server's versioning codec sets them.
func (e *wireEncoder) object(t testing.TB, obj runtime.Object) []byte {
	t.Helper()
	obj = obj.DeepCopyObject()
	gvks, _, err := e.scheme.ObjectKinds(obj)
	require.NoError(t, err)
	obj.GetObjectKind().SetGroupVersionKind(gvks[0])
	var buf bytes.Buffer
	require.NoError(t, e.objectEncoder.Encode(obj, &buf))
	return buf.Bytes()
}

// frame encodes one watch event as one frame.
func (e *wireEncoder) frame(t testing.TB, typ watch.EventType, obj runtime.Object) []byte {
	t.Helper()
	return e.rawFrame(t, string(typ), e.object(t, obj))
}

// rawFrame frames an event whose object bytes are given (possibly broken).
func (e *wireEncoder) rawFrame(t testing.TB, typ string, objectBytes []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := streaming.NewEncoder(e.framer.NewFrameWriter(&buf), e.streamEncoder)
	ev := &metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: objectBytes}}
	require.NoError(t, enc.Encode(ev))
	return buf.Bytes()
}

// mediaTypes is the table every encoding-sensitive test runs over.
var mediaTypes = []string{rest.ContentTypeJSON, rest.ContentTypeProtobuf}

func testPod(ns, name, rv string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv, Labels: map[string]string{"app": name}},
		Spec:       corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

func testPodList(rv, cont string, n int) *corev1.PodList {
	l := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: rv, Continue: cont}}
	for i := range n {
		l.Items = append(l.Items, *testPod("ns1", "pod-"+strconv.Itoa(i), strconv.Itoa(10+i)))
	}
	return l
}

// serveStream answers a watch by writing stream in chunks of chunk bytes
// (all at once when chunk is 0), flushing after each, then ending the
// response. Tiny chunks split frames, and even length prefixes, across
// reads on the client side.
func serveStream(contentType string, stream []byte, chunk int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		if chunk <= 0 {
			chunk = len(stream) + 1
		}
		for len(stream) > 0 {
			n := min(chunk, len(stream))
			if _, err := w.Write(stream[:n]); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			stream = stream[n:]
		}
	}
}

// podsGVR and podsResource name the resource most tests watch.
var (
	podsGVR      = corev1.SchemeGroupVersion.WithResource("pods")
	podsResource = apiresource.Guess(corev1.SchemeGroupVersion.WithKind("Pod"))
)

// newRESTClient builds the rest.Client for cfg, failing the test if
// rest.New refuses cfg.
func newRESTClient(t testing.TB, cfg rest.Config) *rest.Client {
	t.Helper()
	rc, err := rest.New(cfg)
	require.NoError(t, err)
	return rc
}

// newTestLW builds a ListerWatcher against ts with a JSON- or
// protobuf-preferring config; tests override fields through mutate.
func newTestLW(t *testing.T, ts *testserver.Recorder, opts Options, mutate func(*rest.Config)) *ListerWatcher {
	t.Helper()
	cfg := rest.Config{Host: ts.URL}
	if mutate != nil {
		mutate(&cfg)
	}
	lw, err := New(newRESTClient(t, cfg), podsResource, opts)
	require.NoError(t, err)
	t.Cleanup(lw.CloseIdleConnections)
	return lw
}

// collect drains a watch until its channel closes, failing after a bound
// so that a hung watch fails the test instead of hanging it.
func collect(t *testing.T, w watch.Interface) []watch.Event {
	t.Helper()
	var got []watch.Event
	deadline := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return got
			}
			got = append(got, ev)
		case <-deadline:
			t.Fatalf("watch did not end; got %d events", len(got))
		}
	}
}

func podName(t *testing.T, obj runtime.Object) string {
	t.Helper()
	p, ok := obj.(*corev1.Pod)
	require.True(t, ok, "object is %T, want *corev1.Pod", obj)
	return p.Name
}

func concat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func (e *wireEncoder) String() string { return fmt.Sprintf("encoder(%s)", e.mediaType) }
