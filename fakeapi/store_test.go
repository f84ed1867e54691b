package fakeapi

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/seed31a95821/informer/apiresource"
)

// newTestStore builds a store with the default resources and a fixed clock.
func newTestStore(t *testing.T, window int) (*store, *registry) {
	t.Helper()
	reg, err := newRegistry(apiresource.NewScheme(), DefaultResources())
	require.NoError(t, err)
	clock := func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }
	return newStore(window, 0, clock), reg
}

func podsOf(reg *registry) *resourceInfo {
	return reg.byGVK[corev1.SchemeGroupVersion.WithKind("Pod")]
}

func pod(ns, name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
}

// validPod is a pod the real server's validation accepts: one container
// with a name and an image.
func validPod(ns, name string, labels map[string]string) *corev1.Pod {
	p := pod(ns, name, labels)
	p.Spec.Containers = []corev1.Container{{Name: "c", Image: "registry.invalid/c:1"}}
	return p
}

func rvOf(t *testing.T, obj runtime.Object) string {
	t.Helper()
	return resourceVersionOf(obj)
}

func TestStoreStampsOneGlobalResourceVersion(t *testing.T) {
	st, reg := newTestStore(t, 0)
	pods := podsOf(reg)
	cms := reg.byGVK[corev1.SchemeGroupVersion.WithKind("ConfigMap")]

	a, err := st.create(pods, pod("ns", "a", nil))
	require.NoError(t, err)
	cm, err := st.create(cms, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}})
	require.NoError(t, err)
	require.Equal(t, "1", rvOf(t, a))
	require.Equal(t, "2", rvOf(t, cm), "the counter is shared by all resources")
	require.Equal(t, "00000000-0000-4000-8000-000000000001", string(a.(*corev1.Pod).UID))
	require.Equal(t, "Pod", a.GetObjectKind().GroupVersionKind().Kind, "stored objects carry their type")

	_, err = st.create(pods, pod("ns", "a", nil))
	require.True(t, apierrors.IsAlreadyExists(err), "got %v", err)
}

func TestStoreUpdateRules(t *testing.T) {
	st, reg := newTestStore(t, 0)
	pods := podsOf(reg)
	_, err := st.create(pods, pod("ns", "a", nil))
	require.NoError(t, err)

	stale := pod("ns", "a", map[string]string{"x": "1"})
	stale.ResourceVersion = "99"
	_, err = st.update(pods, stale)
	require.True(t, apierrors.IsConflict(err), "a stale resourceVersion is a conflict, got %v", err)

	fresh := pod("ns", "a", map[string]string{"x": "1"})
	fresh.ResourceVersion = "1"
	updated, err := st.update(pods, fresh)
	require.NoError(t, err)
	require.Equal(t, "2", rvOf(t, updated))
	require.Equal(t, int64(1), updated.(*corev1.Pod).Generation, "labels are not spec")

	same := pod("ns", "a", map[string]string{"x": "1"}) // no RV: unconditional
	unchanged, err := st.update(pods, same)
	require.NoError(t, err)
	require.Equal(t, "2", rvOf(t, unchanged), "a no-op update is not a write")
	require.Equal(t, uint64(2), st.rv)

	spec := pod("ns", "a", map[string]string{"x": "1"})
	spec.Spec.NodeName = "n1"
	changed, err := st.update(pods, spec)
	require.NoError(t, err)
	require.Equal(t, int64(2), changed.(*corev1.Pod).Generation, "a spec change bumps generation")

	_, err = st.update(pods, pod("ns", "missing", nil))
	require.True(t, apierrors.IsNotFound(err))
}

func TestStoreValidatesMetadata(t *testing.T) {
	st, reg := newTestStore(t, 0)
	pods := podsOf(reg)
	nodes := reg.byGVK[corev1.SchemeGroupVersion.WithKind("Node")]
	cases := map[string]struct {
		ri  *resourceInfo
		obj runtime.Object
	}{
		"no name":              {pods, pod("ns", "", nil)},
		"bad name":             {pods, pod("ns", "Not_Valid", nil)},
		"no namespace":         {pods, pod("", "a", nil)},
		"namespace on cluster": {nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "n"}}},
		"bad namespace":        {pods, pod("NS!", "a", nil)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := st.create(tc.ri, tc.obj)
			require.True(t, apierrors.IsInvalid(err), "got %v", err)
		})
	}
	gen := pod("ns", "", nil)
	gen.GenerateName = "web-"
	created, err := st.create(pods, gen)
	require.NoError(t, err)
	require.Regexp(t, `^web-[a-z0-9]{5}$`, created.(*corev1.Pod).Name)
}

func TestStoreDeleteRecordsFinalStateAtDeletionRV(t *testing.T) {
	st, reg := newTestStore(t, 0)
	pods := podsOf(reg)
	_, err := st.create(pods, pod("ns", "a", nil))
	require.NoError(t, err)
	_, err = st.delete(pods, "ns", "a", preconditions{resourceVersion: "7"})
	require.True(t, apierrors.IsConflict(err))
	final, err := st.delete(pods, "ns", "a", preconditions{})
	require.NoError(t, err)
	require.Equal(t, "2", rvOf(t, final))
	_, err = st.get(pods, "ns", "a")
	require.True(t, apierrors.IsNotFound(err))

	batch, err := st.eventsAfter(pods, 0, 10)
	require.NoError(t, err)
	require.Len(t, batch.events, 2)
	require.Equal(t, watch.Deleted, batch.events[1].typ)
	require.Equal(t, uint64(2), batch.next)
}

func TestEventLogCompaction(t *testing.T) {
	st, reg := newTestStore(t, 3)
	pods := podsOf(reg)
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		_, err := st.create(pods, pod("ns", name, nil))
		require.NoError(t, err)
	}
	// Window 3 keeps RVs 3..5, so a reader needs rv >= 2.
	require.Equal(t, uint64(2), st.log.compacted)
	_, err := st.eventsAfter(pods, 1, 10)
	require.ErrorAs(t, err, new(errCompacted))
	batch, err := st.eventsAfter(pods, 2, 10)
	require.NoError(t, err)
	require.Len(t, batch.events, 3)

	st.compact()
	_, err = st.eventsAfter(pods, 4, 10)
	require.ErrorAs(t, err, new(errCompacted))
	batch, err = st.eventsAfter(pods, 5, 10)
	require.NoError(t, err)
	require.Empty(t, batch.events)
}

func TestListReadsThePastThroughTheLog(t *testing.T) {
	st, reg := newTestStore(t, 0)
	pods := podsOf(reg)
	for _, name := range []string{"a", "b", "c"} {
		_, err := st.create(pods, pod("ns", name, nil))
		require.NoError(t, err)
	}
	// At RV 3: a, b, c. Then: delete b, update c, add d.
	_, err := st.delete(pods, "ns", "b", preconditions{})
	require.NoError(t, err)
	_, err = st.update(pods, pod("ns", "c", map[string]string{"v": "2"}))
	require.NoError(t, err)
	_, err = st.create(pods, pod("ns", "d", nil))
	require.NoError(t, err)

	past, err := st.list(listQuery{res: pods, atRV: 3})
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "c"}, names(past.items))
	require.Empty(t, past.items[2].(*corev1.Pod).Labels, "c as it was at RV 3")

	now, err := st.list(listQuery{res: pods})
	require.NoError(t, err)
	require.Equal(t, []string{"a", "c", "d"}, names(now.items))
	require.Equal(t, uint64(6), now.rv)

	_, err = st.list(listQuery{res: pods, atRV: 7})
	require.True(t, apierrors.IsTimeout(err), "future RV: %v", err)
}

func TestListPagesAreConsistentUnderWrites(t *testing.T) {
	st, reg := newTestStore(t, 0)
	pods := podsOf(reg)
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		_, err := st.create(pods, pod("ns", name, nil))
		require.NoError(t, err)
	}
	first, err := st.list(listQuery{res: pods, limit: 2})
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b"}, names(first.items))
	require.Equal(t, "ns/c", first.nextKey)
	require.Equal(t, int64(3), first.remaining)

	// Writes between pages must not show up in later pages.
	_, err = st.delete(pods, "ns", "c", preconditions{})
	require.NoError(t, err)
	_, err = st.create(pods, pod("ns", "cc", nil))
	require.NoError(t, err)

	second, err := st.list(listQuery{res: pods, limit: 2, atRV: first.rv, startKey: first.nextKey})
	require.NoError(t, err)
	require.Equal(t, []string{"c", "d"}, names(second.items))
	third, err := st.list(listQuery{res: pods, limit: 2, atRV: first.rv, startKey: second.nextKey})
	require.NoError(t, err)
	require.Equal(t, []string{"e"}, names(third.items))
	require.Empty(t, third.nextKey)
}

func TestListNamespaceRange(t *testing.T) {
	st, reg := newTestStore(t, 0)
	pods := podsOf(reg)
	for _, key := range [][2]string{{"a", "x"}, {"a-b", "y"}, {"a", "z"}, {"b", "w"}} {
		_, err := st.create(pods, pod(key[0], key[1], nil))
		require.NoError(t, err)
	}
	page, err := st.list(listQuery{res: pods, namespace: "a", limit: 1})
	require.NoError(t, err)
	require.Equal(t, []string{"x"}, names(page.items))
	require.Equal(t, int64(1), page.remaining, "only namespace a counts")
	page, err = st.list(listQuery{res: pods, namespace: "a", startKey: page.nextKey})
	require.NoError(t, err)
	require.Equal(t, []string{"z"}, names(page.items))
}

func names(objs []runtime.Object) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.(*corev1.Pod).Name)
	}
	return out
}
