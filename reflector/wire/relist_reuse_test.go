package wire_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer/internal/reuse"
	"github.com/seed31a95821/informer/reflector/wire"
)

// A list or a WatchList of a ListerWatcher given a cache (Options.Relist)
// hands on the cached object for every item the cache holds unchanged, and
// gives every other one to Options.Decoded; a plain watch is left alone.
func TestRelistReusesUnchangedObjects(t *testing.T) {
	for _, ct := range fakeContentTypes {
		t.Run(ct, func(t *testing.T) {
			srv := fakeAPIWithPods(t, 3)
			lw := newFakeLW(t, srv, ct, wire.Options{})
			first, err := lw.List(context.Background(), metav1.ListOptions{})
			require.NoError(t, err)
			cached := map[string]runtime.Object{}
			for i := range first.(*corev1.PodList).Items[:2] { // the third is not cached
				p := &first.(*corev1.PodList).Items[i]
				cached[p.Namespace+"/"+p.Name] = p
			}
			c := reuse.New(func(k string) (runtime.Object, bool) { o, ok := cached[k]; return o, ok }, nil)
			var prepared []string
			lw = newFakeLW(t, srv, ct, wire.Options{Relist: c,
				Decoded: func(o runtime.Object) { prepared = append(prepared, o.(*corev1.Pod).Name) }})
			ctx := context.Background()

			again, err := lw.List(ctx, metav1.ListOptions{})
			require.NoError(t, err)
			items := again.(*corev1.PodList).Items
			require.Len(t, items, 3)
			for _, p := range items[:2] {
				want := cached[p.Namespace+"/"+p.Name].(*corev1.Pod)
				assert.Equal(t, reflect.ValueOf(want.Labels).Pointer(), reflect.ValueOf(p.Labels).Pointer(), "%s is a copy of the cached pod", p.Name)
				_, taken := c.Take(&p)
				assert.True(t, taken)
			}
			assert.Equal(t, []string{items[2].Name}, prepared)

			yes := true
			w, err := lw.Watch(ctx, metav1.ListOptions{SendInitialEvents: &yes, AllowWatchBookmarks: true,
				ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
			require.NoError(t, err)
			defer w.Stop()
			reused := 0
			for range 3 {
				ev := nextEvent(t, w)
				require.Equal(t, watch.Added, ev.Type)
				p := ev.Object.(*corev1.Pod)
				if o, ok := cached[p.Namespace+"/"+p.Name]; ok {
					assert.Same(t, o, ev.Object)
					reused++
				}
			}
			assert.Equal(t, 2, reused)

			plain, err := lw.Watch(ctx, metav1.ListOptions{ResourceVersion: "0"})
			require.NoError(t, err)
			defer plain.Stop()
			checked := 0
			for range 3 {
				ev := nextEvent(t, plain)
				p := ev.Object.(*corev1.Pod)
				if o, ok := cached[p.Namespace+"/"+p.Name]; ok {
					assert.NotSame(t, o, ev.Object, "a watch without initial events decodes as usual")
					checked++
				}
			}
			assert.Equal(t, 2, checked)
		})
	}
}

// A WatchList whose cache is empty (an informer's first sync: Begin
// reports false) looks none of its objects up, and still gives each to
// Options.Decoded.
func TestWatchListWithAnEmptyCacheLooksNothingUp(t *testing.T) {
	for _, ct := range fakeContentTypes {
		t.Run(ct, func(t *testing.T) {
			srv := fakeAPIWithPods(t, 3)
			looked := 0
			c := reuse.New(func(string) (runtime.Object, bool) { looked++; return nil, false }, func() int { return 0 })
			var prepared []string
			lw := newFakeLW(t, srv, ct, wire.Options{Relist: c,
				Decoded: func(o runtime.Object) { prepared = append(prepared, o.(*corev1.Pod).Name) }})
			yes := true
			w, err := lw.Watch(context.Background(), metav1.ListOptions{SendInitialEvents: &yes, AllowWatchBookmarks: true,
				ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
			require.NoError(t, err)
			for range 3 {
				require.Equal(t, watch.Added, nextEvent(t, w).Type)
			}
			w.Stop() // the decoding goroutine has exited: looked and prepared are ours to read
			assert.Zero(t, looked)
			assert.Len(t, prepared, 3)
		})
	}
}
