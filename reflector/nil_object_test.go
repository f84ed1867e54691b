package reflector

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// A buggy ListerWatcher can hand over a typed nil, such as a
// (*corev1.Pod)(nil): not nil to ==, and every accessor dereferences it. It
// must be skipped like any object without metadata, never panic the
// reflector's goroutine.

func TestTypedNilObjectsSkipped(t *testing.T) {
	for _, tc := range []struct {
		name     string
		expected runtime.Object
		nilObj   runtime.Object
	}{
		{"any type", nil, (*corev1.Pod)(nil)},
		{"typed", &corev1.Pod{}, (*corev1.Pod)(nil)},
		{"unstructured", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod"}}, (*unstructured.Unstructured)(nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t, newScriptLW(), Options{WatchList: WatchListOff, ExpectedType: tc.expected})
			var a, b runtime.Object = pod("a", "5"), pod("b", "11")
			if _, ok := tc.nilObj.(*unstructured.Unstructured); ok {
				a, b = unstructuredPod("a", "5"), unstructuredPod("b", "11")
			}
			list := &metav1.List{ListMeta: metav1.ListMeta{ResourceVersion: "10"},
				Items: []runtime.RawExtension{{Object: tc.nilObj}, {Object: a}}}
			h.lw.next(t, "list").list(list, nil)
			h.lw.next(t, "watch").watch(fakeWatch(false, added(tc.nilObj), added(b)), nil)

			assert.Equal(t, []string{"replace [ns/a]@10", "add ns/b@11"}, h.store.waitOps(t, 2))
			h.waitRV("11")
			errs := h.errors()
			require.Len(t, errs, 2)
			for _, e := range errs {
				assert.Equal(t, KindWrongType, e.Kind)
				assert.ErrorIs(t, e, errNoMetadata)
			}
		})
	}
}

func TestTypedNilObjectSkippedInWatchList(t *testing.T) {
	h := start(t, newScriptLW(), Options{})
	h.lw.next(t, "watch").watch(fakeWatch(false,
		added((*corev1.Pod)(nil)), added(pod("a", "5")), marked(bookmark("6", true))), nil)
	assert.Equal(t, []string{"replace [ns/a]@6"}, h.store.waitOps(t, 1))
	assert.ErrorIs(t, h.waitErr(KindWrongType), errNoMetadata)
}

// An ERROR event must carry a Status; a nil one is a response the
// reflector cannot understand. It ends the watch like any ERROR event, and
// like any frame that could not be decoded it leads to a relist, from where
// the reflector was: a watch from there would meet it again.
func TestTypedNilStatusInErrorEvent(t *testing.T) {
	h := start(t, newScriptLW(), listOnly())
	h.sync("10").watch(fakeWatch(false, failed((*metav1.Status)(nil))), nil)
	e := h.waitErr(KindDecode)
	assert.Equal(t, opWatch, e.Op)
	h.waitState(StateBackingOff)
	h.clk.fireNext(t)
	assert.Equal(t, "10", h.lw.next(t, "list").opts.ResourceVersion)
}

func TestTypedNilStatusInWatchListErrorEvent(t *testing.T) {
	h := start(t, newScriptLW(), Options{})
	h.lw.next(t, "watch").watch(fakeWatch(false, failed((*unstructured.Unstructured)(nil))), nil)
	assert.Equal(t, KindDecode, h.waitErr(KindDecode).Kind)
	h.lw.next(t, "list") // WatchList failed: list at once
}

func unstructuredPod(name, rv string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Pod")
	u.SetNamespace("ns")
	u.SetName(name)
	u.SetResourceVersion(rv)
	return u
}

// A ListerWatcher that answers with a typed nil list, instead of an error,
// gets the same treatment as one answering a plain nil: a decode error, a
// backoff and another list. The unstructured one used to panic Run, inside
// apimachinery's list walker.
func TestNilListPageReported(t *testing.T) {
	for _, tc := range []struct {
		name string
		page runtime.Object
	}{
		{"nil", nil},
		{"typed nil", (*corev1.PodList)(nil)},
		{"typed nil unstructured", (*unstructured.UnstructuredList)(nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t, newScriptLW(), listOnly())
			h.lw.next(t, "list").list(tc.page, nil)
			assert.ErrorIs(t, h.waitErr(KindDecode), errNotList)
			h.waitState(StateBackingOff)
			h.clk.fireNext(t)
			h.lw.next(t, "list") // listed again
		})
	}
}

// The same for a watch: a typed nil watch.Interface used to panic Run at
// its first ResultChan call. It is a decode error, after which the
// reflector backs off and lists again from where it was.
func TestNilWatchReported(t *testing.T) {
	for _, tc := range []struct {
		name string
		w    watch.Interface
	}{
		{"nil", nil},
		{"typed nil", (*watch.FakeWatcher)(nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t, newScriptLW(), listOnly())
			h.sync("10").watch(tc.w, nil)
			assert.ErrorIs(t, h.waitErr(KindDecode), ErrDecode)
			h.waitState(StateBackingOff)
			h.clk.fireNext(t)
			assert.Equal(t, "10", h.lw.next(t, "list").opts.ResourceVersion) // listed again
		})
	}
}
