package informer_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/seed31a95821/informer"
	"github.com/seed31a95821/informer/rest"
	"github.com/seed31a95821/informer/workqueue"
)

// nextKey takes the next key from q within the deadline, or fails.
func nextKey(t *testing.T, q *workqueue.Queue[string]) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		key, _ := q.Get()
		got <- key
	}()
	select {
	case key := <-got:
		q.Done(key)
		return key
	case <-time.After(30 * time.Second):
		q.ShutDown()
		t.Fatal("no key within 30s")
		return ""
	}
}

// waitUntil polls cond until it holds, failing the test after 30s.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 30s")
		}
		time.Sleep(time.Millisecond) // polling a condition, with a deadline
	}
}

// EnqueueKeys puts adds, updates and deletes on the queue, the initial list
// behind live events; an UpdateFilter keeps back the updates it rejects.
func TestEnqueueKeysWithFilter(t *testing.T) {
	srv := mustServe(pod("shop", "initial-1", nil), pod("shop", "initial-2", nil))
	defer srv.Close()
	factory := informer.NewFactory(rest.Config{Host: srv.URL()}, informer.FactoryOptions{})
	pods, err := informer.For[*corev1.Pod](factory)
	require.NoError(t, err)
	var q workqueue.Queue[string]
	defer q.ShutDown()
	reg, err := pods.AddEventHandler(informer.EnqueueKeys[*corev1.Pod](&q), informer.HandlerOptions{UpdateFilter: informer.LabelsChanged})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	factory.Start(ctx)
	defer factory.Shutdown()
	require.True(t, informer.WaitForCacheSync(ctx, reg))

	// Nobody has taken a key yet: a live add overtakes the initial list.
	_, err = srv.Create(pod("shop", "live", nil))
	require.NoError(t, err)
	waitUntil(t, func() bool { return q.Len() == 3 })
	assert.Equal(t, "shop/live", nextKey(t, &q))
	got := []string{nextKey(t, &q), nextKey(t, &q)}
	assert.ElementsMatch(t, []string{"shop/initial-1", "shop/initial-2"}, got)

	// An annotation change is filtered out; the label change after it is not.
	p := pod("shop", "live", nil)
	p.Annotations = map[string]string{"note": "x"}
	_, err = srv.Update(p)
	require.NoError(t, err)
	// Delivered counts the notifications the handler's goroutine has taken,
	// filtered or not: 3 adds, then this update.
	waitUntil(t, func() bool { return reg.Stats().Delivered == 4 })
	assert.Zero(t, q.Len(), "the annotation update was filtered out")
	p = p.DeepCopy()
	p.Labels = map[string]string{"tier": "front"}
	_, err = srv.Update(p)
	require.NoError(t, err)
	assert.Equal(t, "shop/live", nextKey(t, &q))
	require.NoError(t, srv.Delete(pod("shop", "initial-1", nil)))
	assert.Equal(t, "shop/initial-1", nextKey(t, &q), "a delete is a key like any other")
	assert.Equal(t, uint64(5), q.Stats().Adds, "2 initial, 1 add, 1 label update, 1 delete: the annotation update never came")
}
