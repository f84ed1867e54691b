package wire_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/seed31a95821/informer/apiresource"
	"github.com/seed31a95821/informer/rest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/internal/realpod"
	"github.com/seed31a95821/informer/reflector"
	"github.com/seed31a95821/informer/reflector/wire"
)

// The ListerWatcher is what the reflector consumes, with the optional
// methods it looks for (reflector/capabilities.go).
var (
	_ reflector.ListerWatcher               = (*wire.ListerWatcher)(nil)
	_ interface{ BytesDecoded() int64 }     = (*wire.ListerWatcher)(nil)
	_ interface{ SupportsWatchList() bool } = (*wire.ListerWatcher)(nil)
	_ interface{ Err() error }              = (*wire.Watcher)(nil)
)

// These tests speak to fakeapi, the project's in-process API server, over
// real HTTP in both encodings: the same requests and frames a reflector
// will exchange with it.

// podsResource names the resource most tests watch.
var podsResource = apiresource.Guess(corev1.SchemeGroupVersion.WithKind("Pod"))

// newRESTClient builds the rest.Client for cfg, failing the test if
// rest.New refuses cfg.
func newRESTClient(t testing.TB, cfg rest.Config) *rest.Client {
	t.Helper()
	rc, err := rest.New(cfg)
	require.NoError(t, err)
	return rc
}

var fakeContentTypes = []string{rest.ContentTypeJSON, rest.ContentTypeProtobuf}

func newFakeAPI(t *testing.T) *fakeapi.Server {
	t.Helper()
	srv, err := fakeapi.NewServer(fakeapi.Options{Token: "fake-token"})
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	return srv
}

// fakeAPIWithPods is a fake API server holding realistic pods 0..n-1.
func fakeAPIWithPods(t *testing.T, n int) *fakeapi.Server {
	t.Helper()
	srv := newFakeAPI(t)
	for i := range n {
		_, err := srv.Create(realpod.New(i))
		require.NoError(t, err)
	}
	return srv
}

func createPod(t *testing.T, srv *fakeapi.Server, ns, name string) *corev1.Pod {
	t.Helper()
	obj, err := srv.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "pause"}}}})
	require.NoError(t, err)
	return obj.(*corev1.Pod)
}

func newFakeLW(t *testing.T, srv *fakeapi.Server, contentType string, opts wire.Options) *wire.ListerWatcher {
	t.Helper()
	lw, err := wire.New(newRESTClient(t, rest.Config{Host: srv.URL(), BearerToken: "fake-token", ContentType: contentType}), podsResource, opts)
	require.NoError(t, err)
	return lw
}

// nextEvent receives one event, failing after a bound.
func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		require.True(t, ok, "watch ended early: %v", w.(*wire.Watcher).Err())
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
		return watch.Event{}
	}
}

func waitClosed(t *testing.T, w watch.Interface) []watch.Event {
	t.Helper()
	var got []watch.Event
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return got
			}
			got = append(got, ev)
		case <-time.After(10 * time.Second):
			t.Fatal("watch did not end")
		}
	}
}

func TestFakeAPIListPagesAndWatch(t *testing.T) {
	for _, ct := range fakeContentTypes {
		t.Run(ct, func(t *testing.T) {
			srv := newFakeAPI(t)
			for i := range 5 {
				createPod(t, srv, "ns1", fmt.Sprintf("p%d", i))
			}
			createPod(t, srv, "ns2", "elsewhere")
			lw := newFakeLW(t, srv, ct, wire.Options{Namespace: "ns1"})
			ctx := context.Background()

			// Two pages of 3 and 2, joined by the continue token.
			var names []string
			opts := metav1.ListOptions{Limit: 3}
			var listRV string
			for {
				obj, err := lw.List(ctx, opts)
				require.NoError(t, err)
				list := obj.(*corev1.PodList)
				for _, p := range list.Items {
					names = append(names, p.Name)
				}
				listRV = list.ResourceVersion
				if list.Continue == "" {
					break
				}
				opts.Continue = list.Continue
			}
			assert.ElementsMatch(t, []string{"p0", "p1", "p2", "p3", "p4"}, names)

			w, err := lw.Watch(ctx, metav1.ListOptions{ResourceVersion: listRV, AllowWatchBookmarks: true})
			require.NoError(t, err)
			defer w.Stop()
			added := createPod(t, srv, "ns1", "new")
			createPod(t, srv, "ns2", "not-watched")
			added.Labels = map[string]string{"v": "2"}
			_, err = srv.Update(added)
			require.NoError(t, err)
			require.NoError(t, srv.Delete(added))

			want := []watch.EventType{watch.Added, watch.Modified, watch.Deleted}
			for i := 0; i < len(want); {
				ev := nextEvent(t, w)
				if ev.Type == watch.Bookmark {
					continue
				}
				assert.Equal(t, want[i], ev.Type)
				pod := ev.Object.(*corev1.Pod)
				assert.Equal(t, "new", pod.Name)
				assert.Equal(t, "Pod", pod.Kind)
				i++
			}
			assert.Positive(t, w.(*wire.Watcher).BytesDecoded())
			assert.Greater(t, lw.BytesDecoded(), w.(*wire.Watcher).BytesDecoded(), "lists count too")
		})
	}
}

func TestFakeAPIExpiredResourceVersion(t *testing.T) {
	for _, ct := range fakeContentTypes {
		t.Run(ct, func(t *testing.T) {
			srv := newFakeAPI(t)
			first := createPod(t, srv, "ns1", "a")
			createPod(t, srv, "ns1", "b")
			srv.Compact()
			lw := newFakeLW(t, srv, ct, wire.Options{})
			w, err := lw.Watch(context.Background(), metav1.ListOptions{ResourceVersion: first.ResourceVersion})
			if err == nil {
				// Served as a real apiserver does: 200, then one ERROR event.
				defer w.Stop()
				ev := nextEvent(t, w)
				require.Equal(t, watch.Error, ev.Type)
				err = apierrors.FromObject(ev.Object)
			}
			assert.True(t, apierrors.IsResourceExpired(err) || apierrors.IsGone(err), "%v", err)
		})
	}
}

func TestFakeAPIFaults(t *testing.T) {
	for _, ct := range fakeContentTypes {
		t.Run(ct, func(t *testing.T) {
			srv := newFakeAPI(t)
			createPod(t, srv, "ns1", "a")
			lw := newFakeLW(t, srv, ct, wire.Options{})
			ctx := context.Background()

			srv.Faults().FailNext(fakeapi.Failure{Verb: "list", Resource: "pods", Code: 429, RetryAfterSeconds: 2})
			_, err := lw.List(ctx, metav1.ListOptions{})
			assert.True(t, apierrors.IsTooManyRequests(err), "%v", err)
			delay, ok := apierrors.SuggestsClientDelay(err)
			assert.True(t, ok)
			assert.Equal(t, 2, delay)

			// A frame cut in half ends the watch quietly, with a typed Err.
			w, err := lw.Watch(ctx, metav1.ListOptions{ResourceVersion: strconv.FormatUint(srv.ResourceVersion(), 10)})
			require.NoError(t, err)
			srv.Faults().CutNextWatchFrame("pods")
			createPod(t, srv, "ns1", "cut")
			evs := waitClosed(t, w)
			for _, ev := range evs {
				assert.NotEqual(t, watch.Error, ev.Type, "a cut frame is not reported as an event")
			}
			assert.ErrorIs(t, w.(*wire.Watcher).Err(), wire.ErrTruncatedFrame)

			// A malformed frame ends it with a final ERROR event.
			w, err = lw.Watch(ctx, metav1.ListOptions{ResourceVersion: strconv.FormatUint(srv.ResourceVersion(), 10)})
			require.NoError(t, err)
			srv.Faults().MalformNextWatchFrame("pods")
			createPod(t, srv, "ns1", "garbled")
			evs = waitClosed(t, w)
			require.NotEmpty(t, evs)
			last := evs[len(evs)-1]
			require.Equal(t, watch.Error, last.Type)
			assert.True(t, apierrors.IsInternalError(apierrors.FromObject(last.Object)))
			assert.ErrorIs(t, w.(*wire.Watcher).Err(), wire.ErrMalformedFrame)
		})
	}
}

func TestFakeAPIAuthAndMetadata(t *testing.T) {
	srv := newFakeAPI(t)
	createPod(t, srv, "ns1", "a")
	bad, err := wire.New(newRESTClient(t, rest.Config{Host: srv.URL(), BearerToken: "wrong"}), podsResource, wire.Options{})
	require.NoError(t, err)
	_, err = bad.List(context.Background(), metav1.ListOptions{})
	assert.True(t, apierrors.IsUnauthorized(err), "%v", err)

	for _, ct := range fakeContentTypes {
		lw := newFakeLW(t, srv, ct, wire.Options{MetadataOnly: true})
		obj, err := lw.List(context.Background(), metav1.ListOptions{})
		require.NoError(t, err)
		list := obj.(*metav1.PartialObjectMetadataList)
		require.Len(t, list.Items, 1)
		assert.Equal(t, "a", list.Items[0].Name)
	}
}

// WatchList (sendInitialEvents): the initial state arrives as ADDED events,
// closed by a bookmark annotated k8s.io/initial-events-end, and the same
// watch goes on with live events.
func TestFakeAPIWatchList(t *testing.T) {
	for _, ct := range fakeContentTypes {
		t.Run(ct, func(t *testing.T) {
			srv := newFakeAPI(t)
			createPod(t, srv, "ns1", "a")
			createPod(t, srv, "ns1", "b")
			lw := newFakeLW(t, srv, ct, wire.Options{})
			require.True(t, lw.SupportsWatchList())
			sendInitial := true
			w, err := lw.Watch(context.Background(), metav1.ListOptions{
				SendInitialEvents: &sendInitial, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true,
			})
			require.NoError(t, err)
			defer w.Stop()
			var initial []string
			for {
				ev := nextEvent(t, w)
				if ev.Type == watch.Bookmark {
					pod := ev.Object.(*corev1.Pod)
					if pod.Annotations[metav1.InitialEventsAnnotationKey] == "true" {
						assert.NotEmpty(t, pod.ResourceVersion)
						break
					}
					continue
				}
				require.Equal(t, watch.Added, ev.Type)
				initial = append(initial, ev.Object.(*corev1.Pod).Name)
			}
			assert.ElementsMatch(t, []string{"a", "b"}, initial)
			createPod(t, srv, "ns1", "live")
			for {
				ev := nextEvent(t, w)
				if ev.Type == watch.Added {
					assert.Equal(t, "live", ev.Object.(*corev1.Pod).Name)
					break
				}
			}
		})
	}
	lw, err := wire.New(newRESTClient(t, rest.Config{Host: "http://127.0.0.1:1"}), podsResource, wire.Options{NoWatchList: true})
	require.NoError(t, err)
	assert.False(t, lw.SupportsWatchList())
}
