package informer

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/seed31a95821/informer/deltafifo"
	"github.com/seed31a95821/informer/fakeapi"
	"github.com/seed31a95821/informer/internal/realpod"
	"github.com/seed31a95821/informer/reflector"
	"github.com/seed31a95821/informer/rest"
)

// The tests of fastPaths: each fast path is on in New and NewFactory, and
// an informer with it off tells its handlers the same events and caches
// the same objects.

// TestFastPathsOffChangeNothing runs one story (a sync, an update, a
// delete, a create, a relist forced by a 410, a create) through a Factory's
// informer with every fast path on, then with each one off and with all
// off, and holds them to the same events, in the same order, and a cache
// equal to the server's.
func TestFastPathsOffChangeNothing(t *testing.T) {
	off := map[string]func(*fastPaths){
		"inline":      func(f *fastPaths) { f.inline = false },
		"cacheKeys":   func(f *fastPaths) { f.cacheKeys = false },
		"relist":      func(f *fastPaths) { f.relist = false },
		"decodeShare": func(f *fastPaths) { f.decodeShare = false },
		"all":         func(f *fastPaths) { *f = fastPaths{} },
	}
	for _, ct := range []string{rest.ContentTypeJSON, rest.ContentTypeProtobuf} {
		t.Run(ct, func(t *testing.T) {
			want := runFastPathStory(t, ct, allFastPaths())
			require.True(t, want.relistKept, "with every fast path on, a relist keeps the cached objects")
			for name, turnOff := range off {
				t.Run(name+" off", func(t *testing.T) {
					fast := allFastPaths()
					turnOff(&fast)
					got := runFastPathStory(t, ct, fast)
					assert.Equal(t, want.events, got.events)
					assert.Equal(t, fast.relist, got.relistKept, "a relist keeps the cached objects only with fastPaths.relist")
				})
			}
		})
	}
}

// storyResult is what runFastPathStory saw.
type storyResult struct {
	events     []string // what the handler was told, in order
	relistKept bool     // the relist left every cached object as it was (the same pointer)
}

func runFastPathStory(t *testing.T, ct string, fast fastPaths) storyResult {
	t.Helper()
	srv, err := fakeapi.NewServer(fakeapi.Options{})
	require.NoError(t, err)
	defer srv.Close()
	for i := range 6 {
		_, err := srv.Create(realpod.New(i))
		require.NoError(t, err)
	}
	opts := FactoryOptions{}
	opts.Informer.Reflector.Backoff = reflector.Backoff{Initial: time.Millisecond, Max: 10 * time.Millisecond}
	opts.Informer.Transform = StripManagedFields()
	f := NewFactory(rest.Config{Host: srv.URL(), ContentType: ct}, opts)
	defer f.Shutdown()
	f.fast = fast
	inf, err := For[*corev1.Pod](f)
	require.NoError(t, err)
	rec := &eventRecorder{}
	_, err = inf.AddEventHandler(rec.handler(), HandlerOptions{KeepAllUpdates: true})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f.Start(ctx)
	rec.waitFor(t, "add "+realpod.New(5).Name)

	p := realpod.New(0)
	p.Labels["v"] = "2"
	_, err = srv.Update(p)
	require.NoError(t, err)
	require.NoError(t, srv.Delete(realpod.New(1)))
	_, err = srv.Create(realpod.New(6))
	require.NoError(t, err)
	rec.waitFor(t, "add "+realpod.New(6).Name)

	before := map[string]runtime.Object{}
	for _, o := range inf.Indexer().List() {
		before[o.(*corev1.Pod).Name] = o
	}
	srv.Faults().FailNext(fakeapi.Failure{Verb: "watch", Resource: "pods", Code: http.StatusGone})
	srv.DropWatches()
	// Relists counts a relist once its snapshot is in the queue; then the
	// queue empties as it is applied.
	require.Eventually(t, func() bool {
		q := inf.QueueStats()
		return inf.Stats().Relists >= 1 && q.Depth == 0 && q.InFlight == 0
	}, time.Minute, time.Millisecond, "no relist")
	_, err = srv.Create(realpod.New(7))
	require.NoError(t, err)
	rec.waitFor(t, "add "+realpod.New(7).Name)

	kept := true
	for _, o := range inf.Indexer().List() {
		if b, ok := before[o.(*corev1.Pod).Name]; ok && b != o {
			kept = false
		}
	}
	requireCacheIsServer(t, srv, inf)
	return storyResult{events: rec.all(), relistKept: kept}
}

// requireCacheIsServer: the informer caches exactly the server's pods,
// without their managedFields (the story's Transform strips them).
func requireCacheIsServer(t *testing.T, srv *fakeapi.Server, inf *SharedInformer[*corev1.Pod]) {
	t.Helper()
	resp, err := http.Get(srv.URL() + "/api/v1/pods")
	require.NoError(t, err)
	defer resp.Body.Close()
	var list corev1.PodList
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&list))
	require.Len(t, inf.Indexer().List(), len(list.Items))
	for i := range list.Items {
		want := &list.Items[i]
		want.ManagedFields = nil
		want.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
		got, err := inf.Lister().Namespace(want.Namespace).Get(want.Name)
		require.NoError(t, err)
		if !equality.Semantic.DeepEqual(want, got) {
			require.Equal(t, want, got, "cached %s differs from the server's", want.Name)
		}
	}
}

// eventRecorder records what a handler is told, one line per call.
type eventRecorder struct {
	mu     sync.Mutex // guards events
	events []string
}

func (r *eventRecorder) handler() Handler[*corev1.Pod] {
	return Handler[*corev1.Pod]{
		OnAdd: func(p *corev1.Pod, initial bool) { r.add(fmt.Sprintf("add %s", p.Name)) },
		OnUpdate: func(old, p *corev1.Pod) {
			r.add(fmt.Sprintf("update %s %s->%s v=%s", p.Name, old.ResourceVersion, p.ResourceVersion, p.Labels["v"]))
		},
		OnDelete: func(p *corev1.Pod, _ bool) { r.add(fmt.Sprintf("delete %s", p.Name)) },
	}
}

func (r *eventRecorder) add(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, line)
}

func (r *eventRecorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

// waitFor waits until line has been recorded.
func (r *eventRecorder) waitFor(t *testing.T, line string) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, l := range r.all() {
			if l == line {
				return true
			}
		}
		return false
	}, time.Minute, time.Millisecond, "no %q; got %v", line, r.all())
}

// The inline hand-off is on in New: a write that finds the queue idle is
// in the cache when the write returns, before any consumer has popped it.
// Off, it waits in the queue.
func TestInlineIsOnByDefault(t *testing.T) {
	web := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", ResourceVersion: "1"}}

	s := New[*corev1.Pod](nil, Options{Name: "pods"})
	require.NoError(t, s.queue.Add(web))
	_, cached := s.idx.Get("shop/web")
	assert.True(t, cached, "applied inline")

	fast := allFastPaths()
	fast.inline = false
	s = newInformer[*corev1.Pod](Options{Name: "pods"}, fast)
	require.NoError(t, s.queue.Add(web))
	_, cached = s.idx.Get("shop/web")
	assert.False(t, cached, "applied without a Pop")
	assert.Equal(t, 1, s.queue.Stats().Depth)
}

// The queue's keys are the cache's own strings in New: the key of an
// update of a cached object is the very string the cache holds. Off, it is
// an equal string of its own.
func TestCacheKeysAreOnByDefault(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprint("cacheKeys=", on), func(t *testing.T) {
			fast := allFastPaths()
			fast.inline = false // so that the update waits for the Pop below
			fast.cacheKeys = on
			s := newInformer[*corev1.Pod](Options{Name: "pods"}, fast)
			web := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", ResourceVersion: "1"}}
			stored := "shop/" + web.Name
			require.NoError(t, s.idx.Add(stored, web))

			require.NoError(t, s.queue.Update(web.DeepCopy()))
			var key string
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			require.NoError(t, s.queue.PopBatch(ctx, 1, func(b deltafifo.Batch) error {
				key = b.Items[0].Key
				return nil
			}))
			require.Equal(t, stored, key)
			assert.Equal(t, on, unsafe.StringData(stored) == unsafe.StringData(key), "the cache's own string")
		})
	}
}

// The decoders share equal maps before the Transform runs, in a Factory's
// informer whose Transform declares SetsFieldsOnly: two pods of one
// deployment reach it with one labels map. Off, or with a Transform that
// does not declare it, each reaches it with its own, and they are shared
// after it (the cache is as small either way).
func TestDecodeShareIsOnByDefault(t *testing.T) {
	for _, tc := range []struct {
		name       string
		off        bool
		leaves     bool
		wantShared bool
	}{
		{name: "default", leaves: true, wantShared: true},
		{name: "off", off: true, leaves: true},
		{name: "transform may modify maps", leaves: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := fakeapi.NewServer(fakeapi.Options{})
			require.NoError(t, err)
			defer srv.Close()
			for i := range 2 {
				_, err := srv.Create(realpod.New(i)) // one deployment: equal labels
				require.NoError(t, err)
			}
			var mu sync.Mutex
			seen := map[uintptr]bool{} // the labels maps the Transform was given
			opts := FactoryOptions{}
			opts.Informer.Transform = Transform{SetsFieldsOnly: tc.leaves, Func: func(obj runtime.Object) (runtime.Object, error) {
				mu.Lock()
				defer mu.Unlock()
				seen[reflect.ValueOf(obj.(*corev1.Pod).Labels).Pointer()] = true
				return obj, nil
			}}
			f := NewFactory(rest.Config{Host: srv.URL()}, opts)
			defer f.Shutdown()
			if tc.off {
				f.fast.decodeShare = false
			}
			inf, err := For[*corev1.Pod](f)
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			f.Start(ctx)
			require.True(t, f.WaitForCacheSync(ctx)["pods"])

			mu.Lock()
			assert.Equal(t, tc.wantShared, len(seen) == 1, "one labels map reached the Transform: %v", seen)
			mu.Unlock()
			pods := inf.Indexer().List()
			require.Len(t, pods, 2)
			assert.Equal(t, reflect.ValueOf(pods[0].(*corev1.Pod).Labels).Pointer(),
				reflect.ValueOf(pods[1].(*corev1.Pod).Labels).Pointer(), "the cache shares them either way")
		})
	}
}

// The protobuf decoder shares whole decoded parts (a template's
// containers) only when nothing modifies a decoded object: no Transform,
// or StripManagedFields, never a Transform of the user's. And a user's
// Transform that writes into a container, as it may when it does not
// declare SetsFieldsOnly, rewrites that pod alone, never every pod of its
// template.
func TestDecodedPartsAreSharedOnlyWhenNothingModifiesThem(t *testing.T) {
	imageOf := func(obj runtime.Object) (runtime.Object, error) {
		p := obj.(*corev1.Pod)
		for i := range p.Spec.Containers {
			p.Spec.Containers[i].Image = "img-of-" + p.Name
		}
		return p, nil
	}
	for name, tc := range map[string]struct {
		transform Transform
		shared    bool
	}{
		"none":                   {Transform{}, true},
		"StripManagedFields":     {StripManagedFields(), true},
		"user's, SetsFieldsOnly": {Transform{Func: imageOf, SetsFieldsOnly: true}, false},
		"user's":                 {Transform{Func: imageOf}, false},
	} {
		t.Run(name, func(t *testing.T) {
			inf := newInformer[*corev1.Pod](Options{Transform: tc.transform}, allFastPaths())
			assert.Equal(t, tc.shared, inf.decoders().shareParts)
			// The decoders take parts from the informer's table (a part
			// found there is every pod's that holds it) on the same
			// condition, and from no other table.
			if tc.shared {
				assert.Same(t, inf.shared, inf.decoders().parts)
			} else {
				assert.Nil(t, inf.decoders().parts)
			}
		})
	}

	srv, err := fakeapi.NewServer(fakeapi.Options{})
	require.NoError(t, err)
	defer srv.Close()
	for i := range 2 { // one template: equal containers
		_, err := srv.Create(realpod.New(i))
		require.NoError(t, err)
	}
	opts := FactoryOptions{}
	opts.Informer.Transform = Transform{Func: imageOf}
	f := NewFactory(rest.Config{Host: srv.URL(), ContentType: rest.ContentTypeProtobuf}, opts)
	defer f.Shutdown()
	inf, err := For[*corev1.Pod](f)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f.Start(ctx)
	require.True(t, f.WaitForCacheSync(ctx)["pods"])
	for i := range 2 {
		want := realpod.New(i)
		got, err := inf.Lister().Get(want.Namespace, want.Name)
		require.NoError(t, err)
		for _, c := range got.Spec.Containers {
			assert.Equal(t, "img-of-"+want.Name, c.Image, "each pod keeps what its own Transform set")
		}
	}
}
