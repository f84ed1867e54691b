package wire

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"testing"

	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/internal/testserver"
	"github.com/seed31a95821/informer/rest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

func TestListDecodesBothEncodings(t *testing.T) {
	for _, mt := range mediaTypes {
		t.Run(mt, func(t *testing.T) {
			enc := newWireEncoder(mt)
			body := enc.object(t, testPodList("42", "next-page", 3))
			ts := testserver.New(t, testserver.ServeBody(mt, http.StatusOK, body))
			lw := newTestLW(t, ts, Options{Namespace: "ns1"}, nil)

			obj, err := lw.List(context.Background(), metav1.ListOptions{Limit: 500})
			require.NoError(t, err)
			list, ok := obj.(*corev1.PodList)
			require.True(t, ok, "got %T", obj)
			assert.Equal(t, "42", list.ResourceVersion)
			assert.Equal(t, "next-page", list.Continue)
			assert.Equal(t, "PodList", list.Kind)
			assert.Equal(t, "v1", list.APIVersion)
			require.Len(t, list.Items, 3)
			for i, p := range list.Items {
				assert.Equal(t, testPodList("42", "", 3).Items[i].ObjectMeta, p.ObjectMeta)
				assert.Equal(t, "Pod", p.Kind, "items carry their kind in every encoding")
				assert.Equal(t, "v1", p.APIVersion)
				assert.Equal(t, "registry.k8s.io/pause:3.10", p.Spec.Containers[0].Image)
			}
			assert.Equal(t, int64(len(body)), lw.BytesDecoded())
			req := ts.Last(t)
			assert.Equal(t, "/api/v1/namespaces/ns1/pods", req.Path)
			assert.Equal(t, rest.ContentTypeProtobuf+", "+rest.ContentTypeJSON, req.Header.Get("Accept"), "built-in type: protobuf preferred")
			assert.Equal(t, rest.DefaultUserAgent, req.Header.Get("User-Agent"))
		})
	}
}

// The query string must carry every ListOptions field exactly as the API
// server will read it back: decode it with the server's own codec.
func TestListOptionsRoundTripThroughQuery(t *testing.T) {
	ts := testserver.New(t, testserver.ServeBody(rest.ContentTypeJSON, http.StatusOK, newWireEncoder(rest.ContentTypeJSON).object(t, testPodList("1", "", 0))))
	lw := newTestLW(t, ts, Options{LabelSelector: "app=default", FieldSelector: "spec.nodeName=n0"}, nil)

	cases := []struct {
		name string
		in   metav1.ListOptions
		want metav1.ListOptions // what the server must decode
	}{
		{
			name: "every field",
			in: metav1.ListOptions{
				LabelSelector: "app=web,tier!=db", FieldSelector: "metadata.namespace=ns1",
				ResourceVersion: "123", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
				Limit: 500, Continue: "tok==", TimeoutSeconds: ptrTo[int64](321),
				AllowWatchBookmarks: true, SendInitialEvents: ptrTo(true),
			},
		},
		{
			name: "selectors default to the Options ones",
			in:   metav1.ListOptions{ResourceVersion: "0"},
			want: metav1.ListOptions{ResourceVersion: "0", LabelSelector: "app=default", FieldSelector: "spec.nodeName=n0"},
		},
		{name: "sendInitialEvents=false is not dropped", in: metav1.ListOptions{SendInitialEvents: ptrTo(false), ResourceVersionMatch: metav1.ResourceVersionMatchExact, ResourceVersion: "7"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if want == (metav1.ListOptions{}) {
				want = tc.in
				if want.LabelSelector == "" {
					want.LabelSelector = "app=default"
				}
				if want.FieldSelector == "" {
					want.FieldSelector = "spec.nodeName=n0"
				}
			}
			_, err := lw.List(context.Background(), tc.in)
			require.NoError(t, err)
			var got metav1.ListOptions
			// The API server decodes with a scheme where core/v1 registered
			// the url.Values -> ListOptions conversions.
			serverCodec := runtime.NewParameterCodec(NewScheme())
			err = serverCodec.DecodeParameters(ts.Last(t).Query, corev1.SchemeGroupVersion, &got)
			require.NoError(t, err)
			got.TypeMeta = metav1.TypeMeta{}
			assert.Equal(t, want, got)
			assert.NotContains(t, ts.Last(t).Query, "watch", "a list is not a watch")
		})
	}
}

// New decodes into the kind its apiresource.Resource names: never a kind
// guessed back from the plural, so that a resource whose plural is not the
// guessed one still decodes (issue #28).
func TestNewTakesTheKindOfItsResource(t *testing.T) {
	widgets := apiresource.Resource{Kind: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, Plural: "widgets"}
	_, err := New(newRESTClient(t, rest.Config{Host: "http://h"}), widgets, Options{})
	assert.ErrorIs(t, err, ErrUnknownKind)
	lw, err := New(newRESTClient(t, rest.Config{Host: "http://h"}), apiresource.Resource{Kind: corev1.SchemeGroupVersion.WithKind("ConfigMap"), Plural: "pods"}, Options{})
	require.NoError(t, err, "an explicit kind is trusted")
	assert.Equal(t, "ConfigMap", lw.target.itemGVK.Kind)
	lw, err = New(newRESTClient(t, rest.Config{Host: "http://h"}), widgets, Options{MetadataOnly: true})
	require.NoError(t, err, "metadata-only needs no Go type for the resource")
	assert.Equal(t, "PartialObjectMetadata", lw.target.itemGVK.Kind)
	_, err = New(newRESTClient(t, rest.Config{Host: "http://h"}), apiresource.Resource{Kind: schema.GroupVersionKind{Kind: "Pod"}, Plural: "pods"}, Options{})
	assert.ErrorIs(t, err, rest.ErrInvalidConfig, "a resource needs its version")
}

func TestWatchDecodesEveryEventType(t *testing.T) {
	for _, mt := range mediaTypes {
		t.Run(mt, func(t *testing.T) {
			enc := newWireEncoder(mt)
			bookmark := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "13", Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
			expired := &metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version: 1 (13)"}
			stream := concat(
				enc.frame(t, watch.Added, testPod("ns1", "a", "10")),
				enc.frame(t, watch.Modified, testPod("ns1", "a", "11")),
				enc.frame(t, watch.Deleted, testPod("ns1", "a", "12")),
				enc.frame(t, watch.Bookmark, bookmark),
				enc.frame(t, watch.Error, expired),
			)
			ts := testserver.New(t, serveStream(enc.contentType, stream, 0))
			lw := newTestLW(t, ts, Options{}, nil)

			w, err := lw.Watch(context.Background(), metav1.ListOptions{ResourceVersion: "9", AllowWatchBookmarks: true})
			require.NoError(t, err)
			defer w.Stop()
			got := collect(t, w)
			require.Len(t, got, 5)
			wantTypes := []watch.EventType{watch.Added, watch.Modified, watch.Deleted, watch.Bookmark, watch.Error}
			for i, ev := range got[:4] {
				assert.Equal(t, wantTypes[i], ev.Type)
				p := ev.Object.(*corev1.Pod)
				assert.Equal(t, "Pod", p.Kind)
				assert.Equal(t, "v1", p.APIVersion)
				assert.Equal(t, []string{"10", "11", "12", "13"}[i], p.ResourceVersion)
			}
			assert.Equal(t, "true", got[3].Object.(*corev1.Pod).Annotations[metav1.InitialEventsAnnotationKey])
			st, ok := got[4].Object.(*metav1.Status)
			require.True(t, ok, "ERROR carries a Status, got %T", got[4].Object)
			assert.Equal(t, metav1.StatusReasonExpired, st.Reason)
			assert.EqualValues(t, 410, st.Code)

			assert.NoError(t, w.(*Watcher).Err(), "a clean end of stream is not an error")
			assert.InDelta(t, len(stream), w.(*Watcher).BytesDecoded(), 1, "JSON may leave the final newline unread")
			assert.Equal(t, w.(*Watcher).BytesDecoded(), lw.BytesDecoded())

			req := ts.Last(t)
			assert.Equal(t, []string{"true"}, req.Query["watch"])
			assert.Equal(t, []string{"9"}, req.Query["resourceVersion"])
			assert.Equal(t, []string{"true"}, req.Query["allowWatchBookmarks"])
		})
	}
}

// Tiny writes split frames, JSON tokens and protobuf length prefixes
// across reads; decoding must not care.
func TestWatchFramesSplitAcrossWrites(t *testing.T) {
	for _, mt := range mediaTypes {
		for _, chunk := range []int{1, 3, 7, 100} {
			t.Run(mt, func(t *testing.T) {
				enc := newWireEncoder(mt)
				var frames [][]byte
				for i := range 5 {
					frames = append(frames, enc.frame(t, watch.Added, testPod("ns1", "p"+string(rune('a'+i)), "1")))
				}
				ts := testserver.New(t, serveStream(enc.contentType, concat(frames...), chunk))
				lw := newTestLW(t, ts, Options{}, nil)
				w, err := lw.Watch(context.Background(), metav1.ListOptions{})
				require.NoError(t, err)
				defer w.Stop()
				got := collect(t, w)
				require.Len(t, got, 5, "chunk=%d", chunk)
				for i, ev := range got {
					assert.Equal(t, "p"+string(rune('a'+i)), podName(t, ev.Object))
				}
				assert.NoError(t, w.(*Watcher).Err())
			})
		}
	}
}

// The API server writes "type" first, but JSON objects are unordered.
func TestWatchJSONObjectBeforeType(t *testing.T) {
	enc := newWireEncoder(rest.ContentTypeJSON)
	pod := enc.object(t, testPod("ns1", "late-type", "5"))
	stream := concat([]byte(`{"object":`), pod, []byte(`,"extra":[1,{"x":2}],"type":"ADDED"}`+"\n"))
	ts := testserver.New(t, serveStream(rest.ContentTypeJSON, stream, 0))
	lw := newTestLW(t, ts, Options{}, nil)
	w, err := lw.Watch(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	got := collect(t, w)
	require.Len(t, got, 1)
	assert.Equal(t, watch.Added, got[0].Type)
	assert.Equal(t, "late-type", podName(t, got[0].Object))
}

// A server that ignores our protobuf preference (as for custom resources)
// answers JSON, and we decode by what it says, not by what we asked.
func TestNegotiationFollowsResponseContentType(t *testing.T) {
	enc := newWireEncoder(rest.ContentTypeJSON)
	ts := testserver.New(t, testserver.ServeBody(rest.ContentTypeJSON+"; charset=utf-8", http.StatusOK, enc.object(t, testPodList("3", "", 1))))
	lw := newTestLW(t, ts, Options{}, func(c *rest.Config) { c.ContentType = rest.ContentTypeProtobuf })
	obj, err := lw.List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, obj.(*corev1.PodList).Items, 1)
	assert.Equal(t, rest.ContentTypeProtobuf, ts.Last(t).Header.Get("Accept"))

	jsonOnly := newTestLW(t, ts, Options{}, func(c *rest.Config) { c.ContentType = rest.ContentTypeJSON })
	_, err = jsonOnly.List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	assert.Equal(t, rest.ContentTypeJSON, ts.Last(t).Header.Get("Accept"))

	html := testserver.New(t, testserver.ServeBody("text/html", http.StatusOK, []byte("<html>login</html>")))
	_, err = newTestLW(t, html, Options{}, nil).List(context.Background(), metav1.ListOptions{})
	assert.ErrorIs(t, err, rest.ErrUnsupportedMediaType)
}

func TestMetadataOnly(t *testing.T) {
	for _, mt := range mediaTypes {
		t.Run(mt, func(t *testing.T) {
			enc := newWireEncoder(mt)
			list := &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "8"}}
			for _, n := range []string{"a", "b"} {
				list.Items = append(list.Items, metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: "ns1", ResourceVersion: "7"}})
			}
			listBody := enc.object(t, list)
			stream := enc.frame(t, watch.Added, &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "c", ResourceVersion: "9"}})
			ts := testserver.New(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Query().Get("watch") == "true" {
					serveStream(enc.contentType, stream, 0)(w, r)
					return
				}
				testserver.ServeBody(mt, http.StatusOK, listBody)(w, r)
			})
			lw := newTestLW(t, ts, Options{MetadataOnly: true}, nil)

			obj, err := lw.List(context.Background(), metav1.ListOptions{})
			require.NoError(t, err)
			got := obj.(*metav1.PartialObjectMetadataList)
			require.Len(t, got.Items, 2)
			assert.Equal(t, "b", got.Items[1].Name)
			assert.Equal(t, "PartialObjectMetadata", got.Items[1].Kind)
			assert.Equal(t, "meta.k8s.io/v1", got.Items[1].APIVersion)
			assert.Contains(t, ts.Last(t).Header.Get("Accept"), "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")
			assert.Contains(t, ts.Last(t).Header.Get("Accept"), rest.ContentTypeProtobuf+";as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")

			w, err := lw.Watch(context.Background(), metav1.ListOptions{})
			require.NoError(t, err)
			evs := collect(t, w)
			require.Len(t, evs, 1)
			pom, ok := evs[0].Object.(*metav1.PartialObjectMetadata)
			require.True(t, ok, "got %T", evs[0].Object)
			assert.Equal(t, "c", pom.Name)
			assert.Contains(t, ts.Last(t).Header.Get("Accept"), "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1")
		})
	}
}

// A server that cannot convert to PartialObjectMetadata answers with whole
// objects; their metadata still decodes.
func TestMetadataOnlyAcceptsWholeObjects(t *testing.T) {
	for _, mt := range mediaTypes {
		t.Run(mt, func(t *testing.T) {
			ts := testserver.New(t, testserver.ServeBody(mt, http.StatusOK, newWireEncoder(mt).object(t, testPodList("4", "", 2))))
			lw := newTestLW(t, ts, Options{MetadataOnly: true}, nil)
			obj, err := lw.List(context.Background(), metav1.ListOptions{})
			require.NoError(t, err)
			got := obj.(*metav1.PartialObjectMetadataList)
			require.Len(t, got.Items, 2)
			assert.Equal(t, "pod-1", got.Items[1].Name)
			assert.Equal(t, map[string]string{"app": "pod-1"}, got.Items[1].Labels)
		})
	}
}

// An object of another kind in a pod watch must not arrive as a half-filled
// *corev1.Pod: it arrives as *runtime.Unknown naming its kind.
func TestWatchWrongKindBecomesUnknown(t *testing.T) {
	for _, mt := range mediaTypes {
		t.Run(mt, func(t *testing.T) {
			enc := newWireEncoder(mt)
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "intruder", Namespace: "ns1"}, Data: map[string]string{"k": "v"}}
			stream := concat(enc.frame(t, watch.Added, cm), enc.frame(t, watch.Added, testPod("ns1", "ok", "2")))
			ts := testserver.New(t, serveStream(enc.contentType, stream, 0))
			w, err := newTestLW(t, ts, Options{}, nil).Watch(context.Background(), metav1.ListOptions{})
			require.NoError(t, err)
			evs := collect(t, w)
			require.Len(t, evs, 2, "a wrong kind does not end the watch")
			u, ok := evs[0].Object.(*runtime.Unknown)
			require.True(t, ok, "got %T", evs[0].Object)
			assert.Equal(t, "ConfigMap", u.Kind)
			assert.Equal(t, "v1", u.APIVersion)
			assert.Equal(t, "ok", podName(t, evs[1].Object))
		})
	}
}

// An ERROR event must carry a Status. One that carries another kind arrives
// as *runtime.Unknown naming it, in both encodings, so that the reflector
// reports a response it cannot read; it used to arrive, in JSON only, as an
// empty Status with code 0.
func TestWatchErrorEventOfAnotherKindBecomesUnknown(t *testing.T) {
	for _, mt := range mediaTypes {
		t.Run(mt, func(t *testing.T) {
			enc := newWireEncoder(mt)
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "not-a-status", Namespace: "ns1"}, Data: map[string]string{"k": "v"}}
			ts := testserver.New(t, serveStream(enc.contentType, enc.frame(t, watch.Error, cm), 0))
			w, err := newTestLW(t, ts, Options{}, nil).Watch(context.Background(), metav1.ListOptions{})
			require.NoError(t, err)
			evs := collect(t, w)
			require.Len(t, evs, 1)
			assert.Equal(t, watch.Error, evs[0].Type)
			u, ok := evs[0].Object.(*runtime.Unknown)
			require.True(t, ok, "got %T", evs[0].Object)
			assert.Equal(t, "ConfigMap", u.Kind)
		})
	}
}

func TestListWrongKindIsAnError(t *testing.T) {
	for _, mt := range mediaTypes {
		t.Run(mt, func(t *testing.T) {
			body := newWireEncoder(mt).object(t, &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}})
			ts := testserver.New(t, testserver.ServeBody(mt, http.StatusOK, body))
			_, err := newTestLW(t, ts, Options{}, nil).List(context.Background(), metav1.ListOptions{})
			assert.ErrorIs(t, err, ErrUnexpectedKind)
		})
	}
}

// A pod list whose item says it is a ConfigMap is refused, not delivered as
// a pod named after the ConfigMap. Only JSON items carry a kind: protobuf
// list items are bare, and the list's own kind is checked above.
func TestListItemOfAnotherKindIsAnError(t *testing.T) {
	body := []byte(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[` +
		`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"ok","namespace":"ns1"}},` +
		`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"intruder","namespace":"ns1"},"data":{"k":"v"}}]}`)
	ts := testserver.New(t, testserver.ServeBody(rest.ContentTypeJSON, http.StatusOK, body))
	obj, err := newTestLW(t, ts, Options{}, nil).List(context.Background(), metav1.ListOptions{})
	require.ErrorIs(t, err, ErrUnexpectedKind, "got %v", obj)
	assert.ErrorContains(t, err, "item 1")
	assert.ErrorContains(t, err, "ConfigMap")
}

// MaxObjectBytes is an int64, so its largest value is the natural way to
// say "no limit". A chunked list (no Content-Length) must then be read
// whole, not refused or cut to nothing by an overflowing limit + 1.
func TestListWithTheLargestLimit(t *testing.T) {
	body := newWireEncoder(rest.ContentTypeJSON).object(t, testPodList("1", "", 2))
	ts := testserver.New(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", rest.ContentTypeJSON)
		w.(http.Flusher).Flush() // chunked: no Content-Length
		_, _ = w.Write(body)
	})
	lw := newTestLW(t, ts, Options{}, func(c *rest.Config) { c.MaxObjectBytes = math.MaxInt64 })
	obj, err := lw.List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, obj.(*corev1.PodList).Items, 2)
}

func TestListTooLarge(t *testing.T) {
	body := newWireEncoder(rest.ContentTypeJSON).object(t, testPodList("1", "", 20))
	// With Content-Length the size is refused before reading; without it
	// (chunked) while reading.
	for _, chunked := range []bool{false, true} {
		ts := testserver.New(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", rest.ContentTypeJSON)
			if chunked {
				w.(http.Flusher).Flush()
			}
			_, _ = w.Write(body)
		})
		lw := newTestLW(t, ts, Options{}, func(c *rest.Config) { c.MaxObjectBytes = int64(len(body) - 1) })
		_, err := lw.List(context.Background(), metav1.ListOptions{})
		assert.ErrorIs(t, err, rest.ErrObjectTooLarge, "chunked=%v", chunked)

		lw = newTestLW(t, ts, Options{}, func(c *rest.Config) { c.MaxObjectBytes = int64(len(body)) })
		_, err = lw.List(context.Background(), metav1.ListOptions{})
		assert.NoError(t, err, "exactly the limit is fine (chunked=%v)", chunked)
	}
}

func TestDeploymentsUseTheirGroupPath(t *testing.T) {
	for _, mt := range mediaTypes {
		enc := newWireEncoder(mt)
		list := &appsv1.DeploymentList{Items: []appsv1.Deployment{{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.DeploymentSpec{Replicas: ptrTo[int32](3)}}}}
		ts := testserver.New(t, testserver.ServeBody(mt, http.StatusOK, enc.object(t, list)))
		lw, err := New(newRESTClient(t, rest.Config{Host: ts.URL}), apiresource.Guess(appsv1.SchemeGroupVersion.WithKind("Deployment")), Options{Namespace: "prod"})
		require.NoError(t, err)
		obj, err := lw.List(context.Background(), metav1.ListOptions{})
		require.NoError(t, err)
		d := obj.(*appsv1.DeploymentList).Items[0]
		assert.Equal(t, int32(3), *d.Spec.Replicas)
		assert.Equal(t, "apps/v1", d.APIVersion)
		assert.Equal(t, "/apis/apps/v1/namespaces/prod/deployments", ts.Last(t).Path)
		lw.CloseIdleConnections()
	}
}

func ptrTo[T any](v T) *T { return &v }

// A list body that does not decode is ErrMalformedObject, whatever the
// encoding, and the decoder's own error stays in the chain.
func TestListMalformedBodyIsTyped(t *testing.T) {
	bodies := map[string][]byte{
		rest.ContentTypeJSON:     []byte(`{"kind":"PodList","items":[{"metadata":`),
		rest.ContentTypeProtobuf: append([]byte("k8s\x00"), 0xff, 0xff, 0xff),
	}
	for mt, body := range bodies {
		t.Run(mt, func(t *testing.T) {
			ts := testserver.New(t, testserver.ServeBody(mt, http.StatusOK, body))
			_, err := newTestLW(t, ts, Options{}, nil).List(context.Background(), metav1.ListOptions{})
			assert.ErrorIs(t, err, ErrMalformedObject)
		})
	}
	ts := testserver.New(t, testserver.ServeBody(rest.ContentTypeJSON, http.StatusOK, []byte(`{"items":`)))
	_, err := newTestLW(t, ts, Options{}, nil).List(context.Background(), metav1.ListOptions{})
	var syntax *json.SyntaxError
	assert.True(t, errors.As(err, &syntax) || errors.Is(err, io.ErrUnexpectedEOF), "JSON's own error is kept: %v", err)
}
