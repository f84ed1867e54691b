package deltafifo

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestTransformRunsOncePerObject follows client-go's transformer sequence:
// every object entering the queue is transformed exactly once, and
// tombstones and Syncs (which reuse objects already transformed) never are.
func TestTransformRunsOncePerObject(t *testing.T) {
	ok := must(t)
	calls := map[*corev1.Pod]int{}
	transform := func(o runtime.Object) (runtime.Object, error) {
		p := o.(*corev1.Pod)
		calls[p]++
		p.Labels = map[string]string{"transformed": "yes"} // in place, as allowed
		return p, nil
	}
	known := newStore()
	q := New(Options{Transform: transform, KnownObjects: known})
	var delivered []Delta
	drain := func() {
		for _, it := range items(popAll(t, q, known)) {
			delivered = append(delivered, it.Deltas...)
		}
	}
	ok(q.Add(pod("foo", "10")))
	ok(q.Add(pod("bar", "11")))
	ok(q.Update(pod("foo", "12")))
	ok(q.Delete(pod("foo", "15")))
	ok(q.Replace(nil, "")) // tombstone for bar@11
	ok(q.Add(pod("bar", "16")))
	ok(q.Replace(nil, "")) // tombstone for bar@16
	drain()
	ok(q.Replace(objs(pod("baz", "1")), ""))
	drain()
	ok(q.Resync()) // Sync of baz@1, the object already transformed
	drain()

	require.Len(t, calls, 6, "one call per object given to the queue")
	for p, n := range calls {
		require.Equal(t, 1, n, "%s@%s transformed %d times", p.Name, p.ResourceVersion, n)
	}
	var tombstones, syncs int
	for _, d := range delivered {
		require.Equal(t, "yes", d.Object.(*corev1.Pod).Labels["transformed"])
		if d.FinalStateUnknown {
			tombstones++
		}
		if d.Type == Sync {
			syncs++
		}
	}
	require.Equal(t, 2, tombstones)
	require.Equal(t, 1, syncs)
}

func TestTransformErrors(t *testing.T) {
	boom := errors.New("boom")
	transform := func(o runtime.Object) (runtime.Object, error) {
		switch o.(*corev1.Pod).Name {
		case "bad":
			return nil, boom
		case "nil":
			return nil, nil
		}
		return o, nil
	}
	q := New(Options{Transform: transform})
	require.ErrorIs(t, q.Add(pod("bad", "1")), boom)
	require.ErrorIs(t, q.Update(pod("nil", "1")), ErrNilObject)
	require.ErrorIs(t, q.Delete(pod("bad", "1")), boom)
	err := q.Replace(objs(pod("good", "1"), pod("bad", "1")), "5")
	require.ErrorIs(t, err, boom)
	require.ErrorContains(t, err, "item 1")
	require.Zero(t, q.queuedUnits(), "a failed Replace queues nothing, not even the good objects")
	require.False(t, q.HasSynced())
}
